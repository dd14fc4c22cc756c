"""Sans-I/O shoe protocol codecs: bytes in, `drivers.events` out.

`reference` is shoe2mqtt's own protocol (docs/protocol.md); `enq` is the ENQ/ETX/BCC frame
family described in public for baccarat-era smart shoes. Both have the same shape:
`DeviceFrameDecoder`, `HostFrameDecoder`, `encode_device_frame`, `encode_host_frame`,
`DeviceMessage`, `HostMessage`, `SEQUENCE` and `HostLink`. What a codec builds on is offered
here: the decoder base with its counters, `Rejected` for a frame that fails a check, the
`SequencePolicy` that says how a shoe numbers its frames, and the `HostLink` of a host that
only listens.
"""

from drivers.codecs.base import Decoder, DecoderCounters, Drop, HostLink, Rejected
from drivers.codecs.sequence import SequencePolicy

__all__ = ["Decoder", "DecoderCounters", "Drop", "HostLink", "Rejected", "SequencePolicy"]
