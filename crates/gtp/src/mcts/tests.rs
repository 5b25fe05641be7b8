//! The tree's own invariants (the player's behaviour is tested in `tests/mcts.rs`).

use super::*;
use weiqi_rules::Preset;

/// After a move, the kept tree is exactly the played move's subtree: its statistics
/// carried over, every child block in range, nothing else kept.
#[test]
fn advancing_keeps_only_the_played_moves_subtree() {
    let root = State::new(7, Preset::Chinese.rules()).unwrap();
    let mut tree = Tree::new(&root, 7, Policy::Light);
    for _ in 0..2000 {
        tree.simulate(&root, false, None);
    }
    let (mv, visits, wins) = tree.root_stats().into_iter().max_by_key(|x| x.1).unwrap();
    let before = tree.nodes.len();
    let mut next = root.clone();
    next.play(mv).unwrap();
    assert!(tree.advance_to(&next));
    assert_eq!(
        (tree.nodes[0].mv, tree.nodes[0].visits, tree.nodes[0].wins),
        (mv, visits, wins)
    );
    assert!(tree.nodes.len() < before);
    // Every node is reachable once: the child blocks tile the arena after the root.
    let mut covered = 1;
    for n in &tree.nodes {
        if n.expanded {
            assert!((n.first + n.count) as usize <= tree.nodes.len());
            covered += n.count as usize;
        }
    }
    assert_eq!(covered, tree.nodes.len());
    // The search goes on from there.
    for _ in 0..200 {
        tree.simulate(&next, false, None);
    }
    assert_eq!(tree.nodes[0].visits, visits + 200);
}
