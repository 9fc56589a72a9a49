//! An object phase's mix (`--mix get:45,stat:30,put:15,delete:10`): each request's weight in
//! the draws of a mix phase on a bucket, as warp's mixed benchmark takes them.

use super::Op;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// The requests of a mix and their weights, in the order given; empty when not asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mix(pub Vec<(Op, u32)>);

impl Mix {
    /// Whether no mix was given.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The request a draw `x` (uniform over u64) picks: each op with its weight's share.
    pub fn draw(&self, x: u64) -> Op {
        let total: u64 = self.0.iter().map(|&(_, w)| u64::from(w)).sum();
        let mut at = x % total.max(1);
        for &(op, w) in &self.0 {
            if at < u64::from(w) {
                return op;
            }
            at -= u64::from(w);
        }
        Op::Read
    }
}

impl FromStr for Mix {
    type Err = String;
    fn from_str(s: &str) -> Result<Mix, String> {
        let mut out: Vec<(Op, u32)> = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, weight) = part
                .split_once(':')
                .ok_or_else(|| format!("`{part}` is not OP:WEIGHT (e.g. get:45,stat:30,put:15,delete:10)"))?;
            let op = <Op as clap::ValueEnum>::from_str(name.trim(), true)
                .ok()
                .filter(|op| matches!(op, Op::Write | Op::Read | Op::Head | Op::List | Op::Delete))
                .ok_or_else(|| {
                    format!("`{name}` is not a request of a mix: give get, put, stat (head), list or delete")
                })?;
            let weight: u32 =
                weight.trim().parse().map_err(|_| format!("`{weight}` in `{part}` is not a whole number"))?;
            if out.iter().any(|(o, _)| *o == op) {
                return Err(format!("{} is named twice in the mix", op.name()));
            }
            out.push((op, weight));
        }
        if !out.is_empty() && out.iter().all(|&(_, w)| w == 0) {
            return Err("every weight of the mix is 0: give at least one above 0".into());
        }
        Ok(Mix(out))
    }
}

impl fmt::Display for Mix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.0.iter().map(|(op, w)| format!("{}:{w}", op.name())).collect();
        f.write_str(&parts.join(","))
    }
}

impl Serialize for Mix {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Mix {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Mix, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warps_default_mix_parses_in_s3_words_and_draws_each_request_its_share() {
        let mix: Mix = "get:45,stat:30,put:15,delete:10".parse().unwrap();
        assert_eq!(mix.0, [(Op::Read, 45), (Op::Head, 30), (Op::Write, 15), (Op::Delete, 10)]);
        assert_eq!(mix.to_string().parse::<Mix>().unwrap(), mix, "stored as it reads back");
        let mut counts = [0u32; 4];
        for x in 0..100 {
            let i = mix.0.iter().position(|&(op, _)| op == mix.draw(x)).unwrap();
            counts[i] += 1;
        }
        assert_eq!(counts, [45, 30, 15, 10]);
        for bad in ["get", "get:x", "rewrite:5", "get:1,read:2", "get:0"] {
            assert!(bad.parse::<Mix>().is_err(), "{bad}");
        }
        assert!("".parse::<Mix>().unwrap().is_empty());
    }

    #[test]
    fn verify_is_taken_beside_a_mix_of_object_requests_and_refused_beside_a_file_mix() {
        use crate::spec::{Data, EngineName, Workload};
        let whole = Data { transfer: 16384, block: 16384, ..Data::default() };
        let objects = Data { engine: EngineName::new("s3", None), mix: "get:1".parse().unwrap(), ..whole.clone() };
        let verified = |data: Data| Workload { ops: vec![Op::Write, Op::Mix], verify: true, ..Workload::from(data) };
        assert_eq!(verified(objects).validate().map_err(|e| e.to_string()), Ok(()));
        let refused = verified(whole).validate().unwrap_err().to_string();
        assert!(refused.contains("cannot follow a mix phase"), "{refused}");
    }
}
