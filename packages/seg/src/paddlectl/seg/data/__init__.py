"""PaddleSeg's data layout: file lists of ``image label`` lines, label PNGs of class ids, transforms."""
