"""Segmentation networks: PP-LiteSeg (STDC backbone, UAFM fusion) and U-Net."""

from .pp_liteseg import PPLiteSeg
from .stdc import STDCNet
from .unet import UNet

__all__ = ["PPLiteSeg", "STDCNet", "UNet"]
