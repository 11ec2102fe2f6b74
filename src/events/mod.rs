//! The local pool's event stream (issues 13 and 14): a sessionpad-only
//! server-sent-events route, **outside the Azure data-plane API**, on which a
//! pool that records calls pushes each call as it is recorded, and the output
//! of running cells as the kernel prints it.
//!
//! # Wire (sessionpad only; no Azure api-version defines it)
//!
//! `GET /.sessionpad/events[?identifier=ID][&others=true]` ([`crate::protocol::events::ROUTE`]), behind the same
//! bearer token as the pool's other routes (`Authorization: Bearer <token>`,
//! 401 in Azure's error shape without it, `aca-api.md` §2 and §6.1). Without
//! `identifier` every session's events come; with it only that session's.
//! With `others=true` ([`crate::protocol::events::OTHERS_QUERY`]) the `call` events of calls made with
//! the subscriber's own `User-Agent` are left out (a notebook has the answers
//! of its own calls already; a call's output can be megabytes).
//! The answer is `text/event-stream`: each event has an `event:` name and one
//! JSON object as `data:`:
//!
//! - `call` ([`crate::protocol::events::RecordedCall`]): a data-plane call just written to the ledger:
//!   exactly the object `sessionpad log --json` prints for it (its ledger
//!   `seq`, time, client `User-Agent`, kind, code or command, status or exit
//!   code, stdout, stderr, result, images by SHA-256, file name, size and
//!   hash), plus `image_data`, the images' bytes in base64 in the same order.
//!   No token and no header other than the `User-Agent` is ever in it (a
//!   [`crate::protocol::record::Call`] has no field for one).
//! - `output` ([`crate::protocol::events::OutputChunk`]): a piece of a running cell's stdout or stderr,
//!   as the kernel sent it (an IOPub `stream` message). A local-pool feature:
//!   the service answers an execution only when it ends, and the REST reply
//!   of the execution stays exactly the service's.
//! - `lagged` ([`crate::protocol::events::Lagged`]): this subscriber fell behind by more than
//!   [`hub::CAPACITY`] events and missed `missed` of them (the pool never
//!   waits for a slow subscriber); `sessionpad log` reads them back from the
//!   ledger.
//!
//! A comment line (`: keep-alive`) comes every 15 s so that an idle stream is
//! seen to be alive.
//!
//! # Who publishes
//!
//! A [`Hub`] is fed by the recording path: every [`crate::ledger::Recorder`]
//! publishes each call it writes to its hub ([`crate::ledger::Recorder::hub`]),
//! after the call is in the ledger (so a follower that subscribes, then reads
//! the ledger, misses nothing and sees nothing twice: it skips `seq`s it has
//! read). Anything that records through a `Recorder` (the local pool, a
//! recording proxy) publishes without further code; it serves the route with
//! [`crate::pool::events::routes`].

pub mod hub;

pub use self::hub::{Hub, Interest, Subscription};

#[cfg(test)]
mod tests;
