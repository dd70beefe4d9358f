"""PicoDet-style anchor-free detector: LCNet backbone, LC-PAN neck, GFL head (task ``det.picodet``)."""
