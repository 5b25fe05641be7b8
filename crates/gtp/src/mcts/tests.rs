//! The tree's own invariants (the player's behaviour is tested in `tests/mcts.rs`).

use super::*;
use weiqi_rules::Preset;

/// After a move, the kept tree is exactly the played move's subtree: its statistics
/// carried over, every child block in range, nothing else kept.
#[test]
fn advancing_keeps_only_the_played_moves_subtree() {
    let root = State::new(7, Preset::Chinese.rules()).unwrap();
    let mut tree = Tree::new(&root, 7, Policy::Light, DEFAULT_SHAPE_PRIOR);
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

/// A new move's virtual wins grow by the shape prior times the square root of its shape's
/// learned share, and by nothing with the prior off; on the empty board the corner point
/// gets less than the 3-3 point.
#[test]
fn learned_shapes_add_their_virtual_wins_to_new_moves() {
    let root = State::new(9, Preset::Chinese.rules()).unwrap();
    let mut with = Tree::new(&root, 7, Policy::Light, 100.0);
    let mut without = Tree::new(&root, 7, Policy::Light, 0.0);
    with.expand(ROOT, &root);
    without.expand(ROOT, &root);
    let children = |t: &Tree| {
        let nd = &t.nodes[ROOT as usize];
        t.nodes[nd.first as usize..(nd.first + nd.count) as usize].to_vec()
    };
    let mut added = std::collections::HashMap::new();
    for (a, b) in children(&with).iter().zip(children(&without)) {
        assert_eq!(a.mv, b.mv);
        let Move::Place(p) = a.mv else {
            assert_eq!(a.amaf_wins, b.amaf_wins, "a pass has no shape");
            continue;
        };
        let share = ShapeTable::builtin()
            .probability(root.board().shape_key(p, Color::Black))
            .unwrap_or(0.0);
        let extra = a.amaf_wins - b.amaf_wins;
        assert!(
            (extra - 100.0 * share.sqrt()).abs() < 1e-3,
            "{p:?}: {extra} for {share}"
        );
        added.insert((p.x, p.y), extra);
    }
    assert!(added[&(0, 0)] < added[&(2, 2)], "{added:?}");
}
