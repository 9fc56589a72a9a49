//! Who sends to whom: the patterns of the network ceiling, over endpoints (one process per
//! node, or every process when all are on one node).

use super::Pattern;

impl Pattern {
    /// Every pattern, in the order they are measured.
    pub const ALL: [Pattern; 5] =
        [Pattern::OneToOne, Pattern::ManyToOne, Pattern::OneToMany, Pattern::ManyToMany, Pattern::Bisection];

    /// The pattern's name, as printed and stored.
    pub fn name(self) -> String {
        crate::spec::variant_name(&self)
    }

    /// Whether the pattern says something of its own with this many endpoints (with two,
    /// N-to-1, 1-to-N and N-to-M are all 1-to-1).
    pub fn worth_it(self, endpoints: usize) -> bool {
        match self {
            Pattern::OneToOne | Pattern::Bisection => endpoints >= 2,
            _ => endpoints >= 3,
        }
    }

    /// The (sender, receiver) links over `endpoints`, both ways when `both_ways`; none when
    /// there are too few endpoints.
    pub fn links(self, endpoints: usize, both_ways: bool) -> Vec<(usize, usize)> {
        let n = endpoints;
        let one_way: Vec<(usize, usize)> = match self {
            _ if n < 2 => Vec::new(),
            Pattern::OneToOne => vec![(1, 0)],
            Pattern::ManyToOne => (1..n).map(|s| (s, 0)).collect(),
            Pattern::OneToMany => (1..n).map(|r| (0, r)).collect(),
            Pattern::ManyToMany => {
                let half = n / 2;
                (0..half).map(|s| (s, half + s % (n - half))).collect()
            }
            Pattern::Bisection => (0..n / 2).map(|s| (s, s + n / 2)).collect(),
        };
        if both_ways || self == Pattern::Bisection {
            one_way.iter().flat_map(|&(s, r)| [(s, r), (r, s)]).collect()
        } else {
            one_way
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every endpoint's bytes out and in, for checking the links by what they add up to.
    fn degrees(links: &[(usize, usize)], n: usize) -> (Vec<usize>, Vec<usize>) {
        let mut out = vec![0; n];
        let mut inn = vec![0; n];
        for &(s, r) in links {
            out[s] += 1;
            inn[r] += 1;
        }
        (out, inn)
    }

    #[test]
    fn links_follow_the_patterns_for_every_endpoint_count() {
        for n in 0..=9 {
            for p in Pattern::ALL {
                for both in [false, true] {
                    let links = p.links(n, both);
                    if n < 2 {
                        assert!(links.is_empty(), "{p:?} with {n}");
                        continue;
                    }
                    assert!(links.iter().all(|&(s, r)| s != r && s < n && r < n), "{p:?} {n}: {links:?}");
                    let mut unique = links.clone();
                    unique.sort();
                    unique.dedup();
                    assert_eq!(unique.len(), links.len(), "no link twice: {p:?} {n}");
                    let (out, inn) = degrees(&links, n);
                    let twice = if both || p == Pattern::Bisection { 2 } else { 1 };
                    let expected = match p {
                        Pattern::OneToOne => 1,
                        Pattern::ManyToOne | Pattern::OneToMany => n - 1,
                        Pattern::ManyToMany | Pattern::Bisection => n / 2,
                    };
                    assert_eq!(links.len(), expected * twice, "{p:?} {n}");
                    match (p, both) {
                        (Pattern::ManyToOne, false) => assert_eq!(inn[0], n - 1),
                        (Pattern::OneToMany, false) => assert_eq!(out[0], n - 1),
                        (Pattern::Bisection, _) => {
                            // Each of the first n/2 endpoints pairs with exactly one of the rest.
                            assert!((0..n / 2).all(|e| out[e] == 1 && inn[e] == 1));
                            assert!(links.iter().all(|&(s, r)| (s < n / 2) != (r < n / 2)));
                        }
                        (Pattern::ManyToMany, false) => {
                            assert!(links.iter().all(|&(s, r)| s < n / 2 && r >= n / 2));
                            let most = inn.iter().max().unwrap();
                            let least = inn[n / 2..].iter().min().unwrap();
                            assert!(most - least <= 1, "receivers evenly loaded: {inn:?}");
                        }
                        _ => {}
                    }
                }
            }
        }
        assert_eq!(Pattern::ManyToMany.links(5, false), vec![(0, 2), (1, 3)]);
        assert_eq!(Pattern::OneToOne.links(2, true), vec![(1, 0), (0, 1)]);
        assert_eq!(Pattern::ManyToOne.name(), "N-to-1");
    }
}
