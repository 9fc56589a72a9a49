//! Object sizes on a bucket (`--object-size`): one size, a list drawn from evenly, a log2-random
//! range or weighted buckets, as warp's object-size options go. Each object's size is a pure
//! function of a uniform draw the caller makes from the seed, the file and the object, so a run
//! repeats its sizes and every process (and the lead that puts objects before a read) agrees.

use super::{Data, Hint, SpecError, VERIFY_HEADER};
use crate::units::{parse_size, GIB, KIB, MIB, TIB};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How big each object is; `Block` (the default): every object is `--block` bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum ObjectSizes {
    /// Every object is the block.
    #[default]
    Block,
    /// One of these, each with the same chance (one size: every object is it).
    List(Vec<u64>),
    /// Between the two (inclusive): an octave [2^e, 2^(e+1)) of the range drawn with the same
    /// chance for each, then a size evenly within it, so small objects are as common per octave
    /// as large ones.
    Random(u64, u64),
    /// Each size with its weight's share of the draws.
    Weighted(Vec<(u64, u32)>),
}

/// Bits of the draw that pick the size within an octave; the bits above pick the octave.
const WITHIN_BITS: u32 = 48;

impl ObjectSizes {
    /// Whether every object is the block (nothing was asked for).
    pub fn is_block(&self) -> bool {
        *self == ObjectSizes::Block
    }

    /// The size a draw `x` (uniform over u64) gives; `None`: the block.
    pub fn draw(&self, x: u64) -> Option<u64> {
        match self {
            ObjectSizes::Block => None,
            ObjectSizes::List(sizes) => sizes.get((x % sizes.len().max(1) as u64) as usize).copied(),
            &ObjectSizes::Random(lo, hi) if lo >= hi => Some(lo),
            &ObjectSizes::Random(lo, hi) => {
                // Octaves from lo's to the one just below hi's power of two; the last reaches hi.
                let (first, last) = (lo.ilog2(), (hi - 1).ilog2());
                let e = first + ((x >> WITHIN_BITS) % u64::from(last - first + 1)) as u32;
                let from = lo.max(1 << e);
                let to = if e == last { hi } else { (1u64 << (e + 1)) - 1 };
                Some(from + (x & ((1 << WITHIN_BITS) - 1)) % (to - from + 1))
            }
            ObjectSizes::Weighted(buckets) => {
                let total: u64 = buckets.iter().map(|&(_, w)| u64::from(w)).sum();
                let mut at = x % total.max(1);
                for &(size, w) in buckets {
                    if at < u64::from(w) {
                        return Some(size);
                    }
                    at -= u64::from(w);
                }
                buckets.last().map(|&(size, _)| size)
            }
        }
    }

    /// The smallest and largest size it can give; `None`: the block.
    pub fn bounds(&self) -> Option<(u64, u64)> {
        let sizes: Vec<u64> = match self {
            ObjectSizes::Block => return None,
            ObjectSizes::List(sizes) => sizes.clone(),
            &ObjectSizes::Random(lo, hi) => vec![lo, hi],
            // A bucket of weight 0 is never drawn.
            ObjectSizes::Weighted(b) => b.iter().filter(|(_, w)| *w > 0).map(|&(s, _)| s).collect(),
        };
        Some((sizes.iter().copied().min()?, sizes.iter().copied().max()?))
    }

    /// Why a data shape cannot draw its objects' sizes from this, if it cannot: only objects
    /// have sizes of their own, each put and got whole in the room of its block, and a verified
    /// one holds its stamp's header.
    pub(super) fn check(&self, data: &Data, verify: bool) -> Result<(), SpecError> {
        let Some((min, max)) = self.bounds() else { return Ok(()) };
        let refuse = |what: String, hint: String| Err(SpecError::Invalid { what, hint: Hint::say(hint) });
        if data.engine.base() != "s3" {
            return refuse(
                format!("--object-size sizes objects on a bucket, and the {} engine moves file data", data.engine),
                "give a bucket with --s3 URL/BUCKET, or leave --object-size out (files take --transfer and --block)"
                    .into(),
            );
        }
        if data.transfer < data.block {
            return refuse(
                "objects of --object-size are put and got whole, and --transfer is less than --block".into(),
                "give --transfer equal to --block".into(),
            );
        }
        if max > data.block {
            return refuse(
                format!(
                    "--object-size reaches {}, more than --block ({}), the room each object has",
                    short(max),
                    short(data.block)
                ),
                format!("give --block {0} --transfer {0}", short(max)),
            );
        }
        if verify && min < VERIFY_HEADER {
            return refuse(
                format!("--verify stamps a {VERIFY_HEADER}-byte header in each object, and --object-size gives objects of {min} bytes"),
                format!("give sizes of {VERIFY_HEADER} bytes or more, or leave --verify out"),
            );
        }
        Ok(())
    }
}

/// A size as a user would type it, and as it reads back: "64k", "1m", "47008".
fn short(bytes: u64) -> String {
    for (scale, suffix) in [(TIB, "t"), (GIB, "g"), (MIB, "m"), (KIB, "k")] {
        if bytes >= scale && bytes % scale == 0 {
            return format!("{}{suffix}", bytes / scale);
        }
    }
    bytes.to_string()
}

/// A size of the list, never 0.
fn size(text: &str) -> Result<u64, String> {
    match parse_size(text)? {
        0 => Err(format!("an object of `{text}` holds nothing: give sizes of 1 byte or more")),
        n => Ok(n),
    }
}

impl FromStr for ObjectSizes {
    type Err = String;
    fn from_str(s: &str) -> Result<ObjectSizes, String> {
        let s = s.trim();
        if s.is_empty() {
            return Ok(ObjectSizes::Block);
        }
        if let Some(range) = s.strip_prefix("random:") {
            let (lo, hi) =
                range.split_once('-').ok_or_else(|| format!("`{s}` is not random:MIN-MAX (e.g. random:1k-1m)"))?;
            let (lo, hi) = (size(lo)?, size(hi)?);
            if lo > hi {
                return Err(format!("`{s}` runs from more to less: give the smaller size first"));
            }
            return Ok(ObjectSizes::Random(lo, hi));
        }
        let parts: Vec<&str> = s.split(',').map(str::trim).filter(|p| !p.is_empty()).collect();
        if parts.is_empty() {
            return Err(format!("`{s}` names no size (e.g. 64k, 4k,64k,1m, random:1k-1m or 64k:70,1m:30)"));
        }
        if !parts.iter().any(|p| p.contains(':')) {
            return parts.iter().map(|p| size(p)).collect::<Result<_, _>>().map(ObjectSizes::List);
        }
        let mut buckets = Vec::new();
        for part in parts {
            let (bytes, weight) = part
                .split_once(':')
                .ok_or_else(|| format!("`{part}` is not SIZE:WEIGHT, as the others are (e.g. 64k:70,1m:30)"))?;
            let weight: u32 =
                weight.trim().parse().map_err(|_| format!("`{weight}` in `{part}` is not a whole number"))?;
            buckets.push((size(bytes)?, weight));
        }
        if buckets.iter().all(|&(_, w)| w == 0) {
            return Err("every weight of the object sizes is 0: give at least one above 0".into());
        }
        Ok(ObjectSizes::Weighted(buckets))
    }
}

impl fmt::Display for ObjectSizes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            ObjectSizes::Block => String::new(),
            ObjectSizes::List(sizes) => sizes.iter().map(|&s| short(s)).collect::<Vec<_>>().join(","),
            &ObjectSizes::Random(lo, hi) => format!("random:{}-{}", short(lo), short(hi)),
            ObjectSizes::Weighted(b) => {
                b.iter().map(|&(s, w)| format!("{}:{w}", short(s))).collect::<Vec<_>>().join(",")
            }
        };
        f.write_str(&text)
    }
}

// Stored and read as the text the command line takes (serde's `into` and `try_from`).
impl From<ObjectSizes> for String {
    fn from(sizes: ObjectSizes) -> String {
        sizes.to_string()
    }
}

impl TryFrom<String> for ObjectSizes {
    type Error = String;
    fn try_from(text: String) -> Result<ObjectSizes, String> {
        text.parse()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sizes `n` draws give, each draw i scrambled (splitmix64's finalizer) as a caller's is.
    fn drawn(sizes: &ObjectSizes, n: u64) -> Vec<u64> {
        let scramble = |i: u64| {
            let z = (i ^ (i >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            let z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        (1..=n).map(|i| sizes.draw(scramble(i.wrapping_mul(0x9E37_79B9_7F4A_7C15))).unwrap()).collect()
    }

    #[test]
    fn each_spelling_reads_back_as_written_and_bad_ones_say_why() {
        for text in ["64k", "4k,64k,1m", "random:1k-1m", "64k:70,1m:30", "47008"] {
            let sizes: ObjectSizes = text.parse().unwrap();
            assert_eq!(sizes.to_string(), text);
            assert_eq!(sizes.to_string().parse::<ObjectSizes>().unwrap(), sizes);
        }
        assert!("".parse::<ObjectSizes>().unwrap().is_block());
        for bad in ["0", ",", "4k,x", "random:1m-1k", "random:1k", "64k:70,1m", "64k:0,1m:0", "64k:x"] {
            assert!(bad.parse::<ObjectSizes>().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_list_draws_each_size_evenly_and_buckets_by_their_weights() {
        let list: ObjectSizes = "4k,64k,1m".parse().unwrap();
        let got = drawn(&list, 3000);
        for s in [4096, 65536, 1 << 20] {
            let n = got.iter().filter(|&&g| g == s).count();
            assert!((900..=1100).contains(&n), "{s}: {n} of 3000");
        }
        let weighted: ObjectSizes = "64k:70,1m:30".parse().unwrap();
        let got: Vec<u64> = (0..100).map(|x| weighted.draw(x).unwrap()).collect();
        assert_eq!(got.iter().filter(|&&g| g == 65536).count(), 70);
        assert_eq!(weighted.bounds(), Some((65536, 1 << 20)));
    }

    #[test]
    fn a_random_range_draws_each_octave_alike_and_stays_within_its_bounds() {
        let sizes: ObjectSizes = "random:1k-1m".parse().unwrap();
        let got = drawn(&sizes, 10_000);
        assert!(got.iter().all(|&s| (1024..=1 << 20).contains(&s)));
        // Ten octaves, 1 KiB..2 KiB up to 512 KiB..1 MiB: each about a tenth of the draws.
        for e in 10..20 {
            let n = got.iter().filter(|&&s| s.ilog2() == e || (e == 19 && s == 1 << 20)).count();
            assert!((850..=1150).contains(&n), "octave 2^{e}: {n} of 10000");
        }
        assert!(got.contains(&(1 << 20)) || got.iter().any(|&s| s > 1000 << 10), "the top of the range is reached");
        assert_eq!(ObjectSizes::Random(5000, 5000).draw(42), Some(5000));
        assert_eq!(ObjectSizes::Block.draw(42), None);
    }
}
