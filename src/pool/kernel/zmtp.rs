//! A guard on the ZMTP 3 byte stream a kernel sends the pool: it follows the
//! framing (the 64-byte greeting, then frames: a flags byte, a 1- or 8-byte
//! length, the body) and refuses a message whose declared size is over a cap
//! before the pool's ZeroMQ stack sees the length that would make it reserve
//! and buffer that much.
//!
//! Why our own parser: the pool's ZeroMQ stack (`zeromq` 0.7 under
//! `jupyter-zmq-client` 3.0.1) has no maximum message size. Its decoder
//! reserves a whole frame of whatever length the peer declares and keeps every
//! frame of a multipart message until the last one, so a kernel (whose code is
//! hostile) could grow the pool by any amount, or make it abort on an
//! allocation it cannot have. libzmq's `ZMQ_MAXMSGSIZE` (the `zmq` crate)
//! would give the cap, but swapping the ZeroMQ stack under jupyter-zmq-client
//! means a C++ build and a rewrite of the kernel client; no kept Rust crate
//! exposes ZMTP framing without buffering whole frames. What is needed is
//! small: the lengths, never the bodies. Reference: ZMTP 3.0, RFC 23/ZMTP
//! (<https://rfc.zeromq.org/spec/23/>), "Framing" and "Greeting".

/// The length of the ZMTP 3 greeting, passed on as it is (the pool's ZeroMQ
/// decoder checks it).
const GREETING_BYTES: u64 = 64;
/// Flags: more frames of this message follow.
const MORE: u8 = 0x01;
/// Flags: the length is 8 bytes (network order) rather than 1.
const LONG: u8 = 0x02;
/// Flags: the frame is a command (`READY`, `PING`, …), not a message part.
const COMMAND: u8 = 0x04;

/// What one frame costs the pool beyond its body while it is held (`zeromq`
/// keeps each frame as a `Bytes` in a `VecDeque`, with its allocation): 64
/// bytes, counted for every frame so that a message of millions of empty
/// frames is bounded too.
pub const FRAME_COST: u64 = 64;

/// Why the guard stopped a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// A message (the frames up to one without the MORE flag, commands among
    /// them) would hold more than the cap: `declared` is what its frames
    /// declared so far, in bytes, with [`FRAME_COST`] per frame.
    TooLarge {
        /// Bytes declared for the message so far, this frame included.
        declared: u64,
    },
    /// A flags byte with bits ZMTP 3 reserves (a peer that does not speak
    /// ZMTP 3, or a stream out of step).
    BadFlags(u8),
}

/// Where a stream was stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stop {
    /// How many bytes at the start of the chunk may still be passed on: those
    /// before the refused frame's header (bytes of that header from an earlier
    /// chunk may have been passed on; a decoder never acts on half a length).
    pub forward: usize,
    /// Why.
    pub why: Refused,
}

#[derive(Debug, Clone, Copy)]
enum State {
    /// Greeting bytes still to come.
    Greeting(u64),
    /// The next byte is a frame's flags.
    Flags,
    /// Reading a length: the frame's flags, bytes still to come, the value so far.
    Length { flags: u8, left: u8, value: u64 },
    /// Body bytes still to come; whether the frame ends its message.
    Body { left: u64, ends: bool },
}

/// Follows one direction of a ZMTP 3 connection (kernel to pool) and stops it
/// at the first message over a cap. Holds no data: only the state of the frame
/// being read, so any stream costs it the same few bytes.
#[derive(Debug, Clone)]
pub struct FrameGuard {
    cap: u64,
    state: State,
    /// Bytes declared by the frames of the message being read, with
    /// [`FRAME_COST`] each.
    message: u64,
}

impl FrameGuard {
    /// A guard for a stream that starts with its greeting, refusing any message
    /// over `cap` bytes (body lengths plus [`FRAME_COST`] per frame).
    pub fn new(cap: u64) -> Self {
        Self {
            cap,
            state: State::Greeting(GREETING_BYTES),
            message: 0,
        }
    }

    /// Reads `chunk`, the next bytes of the stream (any split: a header or a
    /// greeting may span chunks).
    ///
    /// # Errors
    ///
    /// A [`Stop`] when a frame would take its message over the cap, or has
    /// flags ZMTP 3 does not allow: only [`Stop::forward`] bytes of `chunk`
    /// may be passed on, and the stream must end there (the guard is not meant
    /// to be fed again).
    pub fn check(&mut self, chunk: &[u8]) -> Result<(), Stop> {
        let mut i = 0;
        // Where the header of the frame being read started in this chunk.
        let mut header = 0;
        while i < chunk.len() {
            let rest = chunk.len() - i;
            match self.state {
                State::Greeting(left) => {
                    let take = left.min(rest as u64);
                    i += usize::try_from(take).unwrap_or(rest);
                    self.state = match left - take {
                        0 => State::Flags,
                        n => State::Greeting(n),
                    };
                }
                State::Flags => {
                    let flags = chunk[i];
                    if flags & !(MORE | LONG | COMMAND) != 0 {
                        return Err(Stop {
                            forward: i,
                            why: Refused::BadFlags(flags),
                        });
                    }
                    header = i;
                    i += 1;
                    let left = if flags & LONG == 0 { 1 } else { 8 };
                    self.state = State::Length {
                        flags,
                        left,
                        value: 0,
                    };
                }
                State::Length { flags, left, value } => {
                    let value = (value << 8) | u64::from(chunk[i]);
                    i += 1;
                    if left > 1 {
                        self.state = State::Length {
                            flags,
                            left: left - 1,
                            value,
                        };
                        continue;
                    }
                    let declared = self
                        .message
                        .saturating_add(value)
                        .saturating_add(FRAME_COST);
                    if declared > self.cap {
                        return Err(Stop {
                            forward: header,
                            why: Refused::TooLarge { declared },
                        });
                    }
                    self.message = declared;
                    let ends = flags & (MORE | COMMAND) == 0;
                    self.state = State::Body { left: value, ends };
                    if value == 0 {
                        self.end_frame(ends);
                    }
                }
                State::Body { left, ends } => {
                    let take = left.min(rest as u64);
                    i += usize::try_from(take).unwrap_or(rest);
                    if left == take {
                        self.end_frame(ends);
                    } else {
                        self.state = State::Body {
                            left: left - take,
                            ends,
                        };
                    }
                }
            }
        }
        Ok(())
    }

    fn end_frame(&mut self, ends_message: bool) {
        if ends_message {
            self.message = 0;
        }
        self.state = State::Flags;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAP: u64 = 1000;

    fn greeting() -> Vec<u8> {
        let mut g = vec![0u8; 64];
        g[0] = 0xff;
        g[9] = 0x7f;
        g[10] = 3;
        g
    }

    /// One frame on the wire: short when the body fits in 255 bytes and
    /// `long` is not asked for.
    fn frame(flags: u8, body: &[u8], long: bool) -> Vec<u8> {
        let mut out = Vec::new();
        if long || body.len() > 255 {
            out.push(flags | LONG);
            out.extend_from_slice(&(body.len() as u64).to_be_bytes());
        } else {
            out.push(flags);
            out.push(u8::try_from(body.len()).unwrap());
        }
        out.extend_from_slice(body);
        out
    }

    /// A frame header declaring `len` bytes (8-byte length), with no body.
    fn long_header(flags: u8, len: u64) -> Vec<u8> {
        let mut out = vec![flags | LONG];
        out.extend_from_slice(&len.to_be_bytes());
        out
    }

    /// A handshake and a message of several parts, as a kernel sends them.
    fn conversation() -> Vec<u8> {
        let mut s = greeting();
        s.extend(frame(
            COMMAND,
            b"\x05READY\x0bSocket-Type\x00\x00\x00\x03PUB",
            false,
        ));
        s.extend(frame(MORE, b"<IDS|MSG>", false));
        s.extend(frame(MORE, &[b's'; 64], false));
        s.extend(frame(MORE, &[b'h'; 300], false));
        s.extend(frame(0, &[b'c'; 200], true));
        s.extend(frame(COMMAND, b"\x04PING\x00\x00", false));
        s.extend(frame(0, b"", false));
        s
    }

    #[test]
    fn a_conversation_under_the_cap_passes_whole_in_any_split() {
        let stream = conversation();
        for size in [1, 2, 3, 7, 9, 10, 64, 65, 100, stream.len()] {
            let mut guard = FrameGuard::new(CAP);
            for chunk in stream.chunks(size) {
                assert_eq!(guard.check(chunk), Ok(()), "chunks of {size}");
            }
            assert!(matches!(guard.state, State::Flags), "chunks of {size}");
            assert_eq!(guard.message, 0);
        }
    }

    #[test]
    fn messages_are_counted_apart() {
        // Two messages of 600 bytes each pass a cap of 1000; one of both does not.
        let body = vec![b'x'; 600 - usize::try_from(FRAME_COST).unwrap()];
        let mut s = greeting();
        s.extend(frame(0, &body, false));
        s.extend(frame(0, &body, false));
        assert_eq!(FrameGuard::new(CAP).check(&s), Ok(()));
        let mut s = greeting();
        s.extend(frame(MORE, &body, false));
        let at = s.len();
        s.extend(frame(0, &body, false));
        assert_eq!(
            FrameGuard::new(CAP).check(&s),
            Err(Stop {
                forward: at,
                why: Refused::TooLarge { declared: 1200 }
            })
        );
    }

    #[test]
    fn a_huge_declared_length_is_refused_before_its_header_is_passed_on() {
        for len in [CAP, 1 << 40, u64::MAX] {
            let mut s = greeting();
            s.extend(frame(MORE, b"<IDS|MSG>", false));
            let at = s.len();
            s.extend(long_header(0, len));
            s.extend_from_slice(b"body that never comes");
            let stop = FrameGuard::new(CAP).check(&s).unwrap_err();
            assert_eq!(stop.forward, at, "{len}");
            assert!(
                matches!(stop.why, Refused::TooLarge { declared } if declared > CAP),
                "{stop:?}"
            );
        }
    }

    #[test]
    fn a_header_split_across_chunks_is_refused_in_the_chunk_that_completes_it() {
        let mut s = greeting();
        s.extend(long_header(0, 5000));
        let (first, second) = s.split_at(64 + 4);
        let mut guard = FrameGuard::new(CAP);
        assert_eq!(guard.check(first), Ok(()));
        // Half a length was passed on: harmless, no decoder reserves on it.
        let stop = guard.check(second).unwrap_err();
        assert_eq!(stop.forward, 0);
        assert_eq!(
            stop.why,
            Refused::TooLarge {
                declared: 5000 + FRAME_COST
            }
        );
    }

    #[test]
    fn many_small_frames_of_one_message_are_bounded_by_their_cost() {
        let mut s = greeting();
        let frames = CAP / FRAME_COST + 1;
        for _ in 0..frames {
            s.extend(frame(MORE, b"", false));
        }
        let stop = FrameGuard::new(CAP).check(&s).unwrap_err();
        assert_eq!(stop.forward, s.len() - 2);
        assert_eq!(
            stop.why,
            Refused::TooLarge {
                declared: frames * FRAME_COST
            }
        );
    }

    #[test]
    fn commands_count_toward_the_message_they_interrupt() {
        let mut s = greeting();
        s.extend(frame(MORE, &[b'a'; 500], false));
        s.extend(frame(COMMAND, &[b'c'; 500], false));
        assert!(matches!(
            FrameGuard::new(CAP).check(&s),
            Err(Stop {
                why: Refused::TooLarge { .. },
                ..
            })
        ));
        // A command alone over the cap is refused too.
        let mut s = greeting();
        s.extend(frame(COMMAND, &[b'c'; 1000], false));
        assert!(FrameGuard::new(CAP).check(&s).is_err());
    }

    #[test]
    fn reserved_flag_bits_stop_the_stream() {
        let mut s = greeting();
        s.extend(frame(0, b"ok", false));
        let at = s.len();
        s.push(0x80);
        s.push(1);
        assert_eq!(
            FrameGuard::new(CAP).check(&s),
            Err(Stop {
                forward: at,
                why: Refused::BadFlags(0x80)
            })
        );
    }

    #[test]
    fn short_and_long_lengths_of_the_same_body_read_alike() {
        for long in [false, true] {
            let mut s = greeting();
            s.extend(frame(0, &[b'z'; 200], long));
            s.extend(frame(0, b"next", false));
            let mut guard = FrameGuard::new(CAP);
            assert_eq!(guard.check(&s), Ok(()));
            assert!(matches!(guard.state, State::Flags));
        }
    }

    #[test]
    fn a_body_is_skipped_without_reading_it_as_headers() {
        // A body full of bytes that would be bad flags.
        let mut s = greeting();
        s.extend(frame(0, &[0xff; 300], false));
        let mut guard = FrameGuard::new(CAP);
        for chunk in s.chunks(33) {
            assert_eq!(guard.check(chunk), Ok(()));
        }
    }
}
