"""Textures and surfaces (cuda.core.texture's names): opaque and mipmapped CUDA arrays, and the
bindless texture and surface objects built on them.

Example::

    from nanocuda import Device
    from nanocuda.texture import OpaqueArrayOptions, ResourceDescriptor, TextureObjectOptions

    dev = Device(); dev.set_current()
    arr = dev.create_opaque_array(OpaqueArrayOptions(shape=(64, 64), format="float32", num_channels=1))
    tex = dev.create_texture_object(resource=ResourceDescriptor.from_opaque_array(arr),
                                    options=TextureObjectOptions(filter_mode="linear"))
    # pass tex.handle to a kernel as a cudaTextureObject_t (a 64-bit integer)
"""

from ._array import OpaqueArray, OpaqueArrayOptions
from ._mipmapped_array import MipmappedArray, MipmappedArrayOptions
from ._surface import SurfaceObject
from ._texture import ResourceDescriptor, TextureObject, TextureObjectOptions

__all__ = [
    "MipmappedArray",
    "MipmappedArrayOptions",
    "OpaqueArray",
    "OpaqueArrayOptions",
    "ResourceDescriptor",
    "SurfaceObject",
    "TextureObject",
    "TextureObjectOptions",
]
