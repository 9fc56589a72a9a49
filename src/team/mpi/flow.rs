//! Streams of messages between processes with a window in flight, as OSU's osu_bw and
//! osu_mbw_mr do: non-blocking sends and receives, each completed one reposted at once, so
//! the network always has `window` messages per peer and direction to carry.

use crate::sys::mpi::{Comm, Window};
use crate::team::{Flow, FlowCount};

const TAG_FLOW: i32 = 0x107;

/// One message stream: a peer and a direction, with what is left to post and what is out.
struct Stream {
    peer: i32,
    send: bool,
    left: usize,
    out: usize,
}

pub(super) fn run(comm: &Comm, flow: &Flow) -> FlowCount {
    // Every send reads the one buffer and every receive lands in the other (as OSU's do): the
    // bytes are not looked at, and one buffer per message would bound nothing.
    let outgoing = vec![0x5au8; flow.message];
    let mut incoming = vec![0u8; flow.message];
    let window = flow.window.max(1);
    let mut streams: Vec<Stream> = flow
        .to
        .iter()
        .map(|&p| (p, true))
        .chain(flow.from.iter().map(|&p| (p, false)))
        .map(|(peer, send)| Stream { peer: peer as i32, send, left: flow.count, out: 0 })
        .collect();
    let mut owner: Vec<usize> = Vec::new();
    let mut posted = Window::new(comm, TAG_FLOW, &outgoing, &mut incoming);
    let mut count = FlowCount::default();
    for (s, stream) in streams.iter_mut().enumerate() {
        for _ in 0..window.min(stream.left) {
            post(&mut posted, stream, None);
            owner.push(s);
        }
        count.peak_in_flight = count.peak_in_flight.max(stream.out);
    }
    while let Some(slot) = posted.wait_any() {
        let stream = &mut streams[owner[slot]];
        stream.out -= 1;
        if stream.send {
            count.sent += 1;
        } else {
            count.received += 1;
        }
        if stream.left > 0 {
            post(&mut posted, stream, Some(slot));
        }
    }
    count
}

/// Posts the next message of `stream`, in `slot` or a new one.
fn post(posted: &mut Window, stream: &mut Stream, slot: Option<usize>) {
    stream.left -= 1;
    stream.out += 1;
    posted.post(stream.peer, stream.send, slot);
}
