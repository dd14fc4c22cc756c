"""Sans-I/O shoe protocol codecs: bytes in, `drivers.events` out.

`reference` is shoe2mqtt's own protocol (docs/protocol.md); `enq` is the ENQ/ETX/BCC frame
family described in public for baccarat-era smart shoes. Both decoders share `base.Decoder`.
"""

from drivers.codecs.base import Decoder, DecoderCounters

__all__ = ["Decoder", "DecoderCounters"]
