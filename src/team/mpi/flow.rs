//! Streams of messages between processes with a window in flight, as OSU's osu_bw and
//! osu_mbw_mr do: non-blocking sends and receives, each completed one reposted at once, so
//! the network always has `window` messages per peer and direction to carry.

use super::Comm;
use crate::team::{Flow, FlowCount};
use mpi::ffi;
use mpi::raw::AsRaw;

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
    // SAFETY: RSMPI_REQUEST_NULL is a plain handle value.
    let mut requests: Vec<ffi::MPI_Request> = Vec::new();
    let mut count = FlowCount::default();
    for (s, stream) in streams.iter_mut().enumerate() {
        for _ in 0..window.min(stream.left) {
            requests.push(post(comm, stream, &outgoing, &mut incoming));
            owner.push(s);
        }
        count.peak_in_flight = count.peak_in_flight.max(stream.out);
    }
    loop {
        let mut index = 0;
        // SAFETY: requests holds valid or null handles; Waitany sets the finished one to null.
        unsafe {
            ffi::MPI_Waitany(requests.len() as i32, requests.as_mut_ptr(), &mut index, ffi::RSMPI_STATUS_IGNORE);
        }
        if index == unsafe { ffi::RSMPI_UNDEFINED } || index < 0 {
            break;
        }
        let slot = index as usize;
        let stream = &mut streams[owner[slot]];
        stream.out -= 1;
        if stream.send {
            count.sent += 1;
        } else {
            count.received += 1;
        }
        if stream.left > 0 {
            requests[slot] = post(comm, stream, &outgoing, &mut incoming);
        }
    }
    count
}

/// Posts the next message of `stream`.
fn post(comm: &Comm, stream: &mut Stream, outgoing: &[u8], incoming: &mut [u8]) -> ffi::MPI_Request {
    stream.left -= 1;
    stream.out += 1;
    // SAFETY: the buffers outlive every request (they live until `run` returns, after the
    // last wait); MPI writes at most `incoming.len()` bytes.
    unsafe {
        let mut req = std::mem::zeroed();
        if stream.send {
            ffi::MPI_Isend(
                outgoing.as_ptr() as *mut libc::c_void,
                outgoing.len() as i32,
                ffi::RSMPI_UINT8_T,
                stream.peer,
                TAG_FLOW,
                comm.0.as_raw(),
                &mut req,
            );
        } else {
            ffi::MPI_Irecv(
                incoming.as_mut_ptr() as *mut libc::c_void,
                incoming.len() as i32,
                ffi::RSMPI_UINT8_T,
                stream.peer,
                TAG_FLOW,
                comm.0.as_raw(),
                &mut req,
            );
        }
        req
    }
}
