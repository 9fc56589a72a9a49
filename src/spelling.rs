//! The nearest known word to a typo, for "did you mean" hints.

/// Edits (insertions, deletions, substitutions) between `a` and `b`.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diagonal + usize::from(ca != *cb)).min(row[j] + 1).min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// The word of `known` nearest `text` (case aside), when it is within two edits: a typo.
pub fn nearest<'a>(text: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = text.to_lowercase();
    known.into_iter().map(|k| (distance(&lower, k), k)).filter(|(d, _)| *d <= 2).min().map(|(_, k)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_finds_its_word_and_a_stranger_finds_none() {
        assert_eq!(nearest("repetitons", ["name", "repetitions", "order"]), Some("repetitions"));
        assert_eq!(nearest("TRANSFER", ["transfer", "total"]), Some("transfer"));
        assert_eq!(nearest("colour", ["name", "order"]), None);
        assert_eq!(distance("kitten", "sitting"), 3);
    }
}
