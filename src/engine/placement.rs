//! Which tasks work and whose data they read, from the node of every task.

/// Under `--reorder`, the task whose data each task reads, and whether every read crosses to
/// another node. Tasks are listed node by node and the list is rotated by the size of the
/// largest node, so no task reads its own node's data, whatever the placement (block or
/// cyclic) and however uneven the nodes, as long as no node holds more than half the tasks.
/// Otherwise (one node, or one node with most tasks) it shifts by one task, and says so.
pub fn reorder_sources(nodes: &[u32]) -> (Vec<usize>, bool) {
    let n = nodes.len();
    let mut listed: Vec<usize> = (0..n).collect();
    listed.sort_by_key(|&r| (nodes[r], r));
    let largest = largest_node(nodes);
    let crosses = largest * 2 <= n;
    let shift = if crosses { largest } else { 1 };
    let mut sources = vec![0; n];
    for (i, &reader) in listed.iter().enumerate() {
        sources[reader] = listed[(i + shift) % n.max(1)];
    }
    (sources, crosses)
}

/// How many of the entries of `nodes` the most crowded node has (0 for none).
pub fn largest_node(nodes: &[u32]) -> usize {
    let mut count = std::collections::BTreeMap::new();
    for n in nodes {
        *count.entry(n).or_insert(0usize) += 1;
    }
    count.into_values().max().unwrap_or(0)
}

/// The ranks of the first `count` tasks taken round-robin over nodes: one task on every node
/// before a second on any (as the papers spread client threads over nodes).
pub fn round_robin(nodes: &[u32], count: usize) -> Vec<usize> {
    let mut by_node: Vec<Vec<usize>> = Vec::new();
    let mut node_ids: Vec<u32> = nodes.to_vec();
    node_ids.sort_unstable();
    node_ids.dedup();
    for id in &node_ids {
        by_node.push((0..nodes.len()).filter(|&r| nodes[r] == *id).collect());
    }
    let mut chosen = Vec::with_capacity(count);
    for depth in 0.. {
        let before = chosen.len();
        for ranks in &by_node {
            if let Some(&r) = ranks.get(depth) {
                if chosen.len() < count {
                    chosen.push(r);
                }
            }
        }
        if chosen.len() == before || chosen.len() == count {
            break;
        }
    }
    chosen.sort_unstable();
    chosen
}

/// Whether `rank` is the first task of its node (it drops that node's caches).
pub fn leads_its_node(nodes: &[u32], rank: usize) -> bool {
    nodes.iter().position(|&n| n == nodes[rank]) == Some(rank)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_crossing(nodes: &[u32]) {
        let (sources, crosses) = reorder_sources(nodes);
        assert!(crosses, "{nodes:?}");
        let mut seen = sources.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..nodes.len()).collect::<Vec<_>>(), "every task's data read once: {nodes:?}");
        for (reader, &source) in sources.iter().enumerate() {
            assert_ne!(nodes[reader], nodes[source], "task {reader} reads its own node: {nodes:?}");
        }
    }

    #[test]
    fn reorder_crosses_nodes_for_block_cyclic_and_uneven_placement() {
        check_crossing(&[0, 0, 1, 1, 2, 2]); // block
        check_crossing(&[0, 1, 2, 0, 1, 2]); // cyclic (IOR -C assumes block)
        check_crossing(&[0, 0, 0, 1, 1, 2, 2]); // uneven
        check_crossing(&[2, 0, 1, 0, 2, 1, 0]); // uneven and cyclic
    }

    #[test]
    fn reorder_on_one_node_shifts_by_one_and_says_it_cannot_cross() {
        let (sources, crosses) = reorder_sources(&[0, 0, 0]);
        assert_eq!((sources, crosses), (vec![1, 2, 0], false));
        assert!(!reorder_sources(&[0, 0, 0, 1]).1, "a node with most tasks cannot be avoided");
    }

    #[test]
    fn round_robin_takes_one_per_node_first() {
        let nodes = [0, 0, 0, 1, 1, 2];
        assert_eq!(round_robin(&nodes, 1), vec![0]);
        assert_eq!(round_robin(&nodes, 3), vec![0, 3, 5]);
        assert_eq!(round_robin(&nodes, 5), vec![0, 1, 3, 4, 5]);
        assert_eq!(round_robin(&nodes, 6), vec![0, 1, 2, 3, 4, 5]);
        let cyclic = [0, 1, 0, 1];
        assert_eq!(round_robin(&cyclic, 2), vec![0, 1]);
    }

    #[test]
    fn each_node_has_one_leader() {
        let nodes = [1, 0, 1, 0, 2];
        let leads: Vec<usize> = (0..5).filter(|&r| leads_its_node(&nodes, r)).collect();
        assert_eq!(leads, vec![0, 1, 4]);
    }
}
