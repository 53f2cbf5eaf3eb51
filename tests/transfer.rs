//! A head computed by one explorer and adopted by another (the page's Web Worker and the page,
//! src/explorer/transfer.rs) has the bits, the extremes and the layer output the adopting
//! explorer would have computed itself, for every fixture (every mechanism and layout) and
//! every mechanism on the sentence with the untrained and the trained models; a head is only
//! adopted under the key it was computed for, and adopting counts as no recomputation.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::path::PathBuf;

use diffattn::engine::shift_diff::Difference;
use diffattn::engine::{MechanismKind, StageId};
use diffattn::explorer::{Explorer, HeadKey};
use diffattn::model::Model;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn trained(mechanism: &str) -> Model {
    let bytes = std::fs::read(root().join("weights").join(format!("{mechanism}.bin"))).unwrap();
    Model::from_bytes(&bytes).unwrap()
}

/// Every stage `e` shows, with V2's λ table (shared by the heads).
fn stages(e: &Explorer) -> Vec<StageId> {
    e.stages()
}

/// Checks that `page`, after adopting from `worker` every head it lacks, has the bits of
/// `local` (which computed every head itself), its extremes and its output, and that the
/// counters say the adopted heads were not computed.
fn adopt_every_head(name: &str, page: &mut Explorer, worker: &mut Explorer, local: &mut Explorer) {
    // The page has computed its shown head (as a render does); the worker mirrors it.
    page.compute().unwrap();
    local.compute_all().unwrap();
    let key = page.head_key().unwrap();
    assert!(key.is_some(), "{name}");
    assert_eq!(
        worker.head_key().unwrap(),
        key,
        "{name}: a mirror has the same key"
    );
    let before = page.recomputations();
    let missing = page.missing_heads();
    // What goes to a worker: heads without maps (a loaded spec keeps its first head's maps,
    // which loading checks: it lacks its shift stages only).
    let sent = page.heads_without_maps();
    assert!(sent.iter().all(|h| missing.contains(h)), "{name}");
    for &h in &sent {
        let parts = worker.export_head(h).unwrap();
        assert_eq!(Some(parts.key), key, "{name}");
        assert!(
            worker.missing_heads().contains(&h),
            "{name}: the worker keeps no copy of head {h}"
        );
        assert!(page.adopt_head(parts.clone()).unwrap(), "{name}: head {h}");
        // It has its maps now: the worker is not asked for it again, and the same reply
        // again is refused.
        assert!(!page.heads_without_maps().contains(&h), "{name}: head {h}");
        assert!(!page.adopt_head(parts).unwrap(), "{name}: head {h} twice");
    }
    let after = page.recomputations();
    assert_eq!(after.adopted - before.adopted, sent.len() as u64, "{name}");
    assert_eq!(
        (
            after.projections,
            after.maps,
            after.shift_stages,
            after.lambda
        ),
        (
            before.projections,
            before.maps,
            before.shift_stages,
            before.lambda
        ),
        "{name}: adopting computes nothing"
    );
    // The adopted heads' shift stages (the worker sends maps only) are computed here, and
    // nothing else: no maps, no λ.
    while page.compute_next_with_maps().unwrap() {}
    assert!(page.missing_heads().is_empty(), "{name}");
    let done = page.recomputations();
    assert_eq!(
        (done.projections, done.maps, done.lambda),
        (before.projections, before.maps, before.lambda),
        "{name}: only shift stages"
    );
    assert!(
        done.shift_stages - before.shift_stages <= missing.len() as u64,
        "{name}"
    );
    let heads = page.settings().maps.heads;
    for stage in stages(page) {
        for h in 0..heads {
            let (got, want) = (
                page.head_map(stage, h).unwrap(),
                local.head_map(stage, h).unwrap(),
            );
            assert_eq!(got.dim(), want.dim(), "{name}: {stage:?} head {h}");
            assert!(
                got.iter()
                    .zip(want.iter())
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "{name}: {stage:?} head {h}"
            );
            assert_eq!(
                page.head_stats(stage, h),
                local.head_stats(stage, h),
                "{name}: {stage:?} head {h}"
            );
        }
    }
    let (out, want) = (page.layer_output().unwrap(), local.layer_output().unwrap());
    assert_eq!(
        out.map(|o| o.iter().map(|v| v.to_bits()).collect::<Vec<_>>()),
        want.map(|o| o.iter().map(|v| v.to_bits()).collect::<Vec<_>>()),
        "{name}: output"
    );
    // Every head is in: every head drawn, the output and the prediction recompute nothing.
    let r = page.recomputations();
    page.compute_all().unwrap();
    page.prediction().unwrap();
    assert_eq!(page.recomputations(), r, "{name}");
}

#[test]
fn every_fixture_adopted_head_by_head_has_the_bits_computed_here() {
    let mut tried = 0;
    for (name, spec) in common::fixture_specs() {
        if spec.page_support().is_err() {
            continue;
        }
        let (mut page, mut worker, mut local) = (
            Explorer::new(Model::untrained()),
            Explorer::new(Model::untrained()),
            Explorer::new(Model::untrained()),
        );
        for e in [&mut page, &mut worker, &mut local] {
            e.load(spec.clone())
                .unwrap_or_else(|err| panic!("{name}: {err}"));
        }
        page.set_head(spec.heads - 1).unwrap();
        adopt_every_head(&name, &mut page, &mut worker, &mut local);
        tried += 1;
    }
    assert!(tried > 20, "{tried} fixtures");
}

#[test]
fn every_mechanism_on_the_sentence_untrained_and_trained_adopts_the_same_bits() {
    let text = "the film was not good but the actors were wonderful and the music stayed";
    for kind in MechanismKind::ALL {
        let name = diffattn::names::name_of(kind);
        for model in [None, Some(name)] {
            let mk = || {
                let mut e = Explorer::new(model.map_or_else(Model::untrained, trained));
                e.set_text(text);
                e.update_maps(|m| {
                    m.mechanism = kind;
                    m.heads = if model.is_some() { m.heads } else { 4 };
                })
                .unwrap();
                e
            };
            let (mut page, mut worker, mut local) = (mk(), mk(), mk());
            let label = format!(
                "{name} ({})",
                if model.is_some() {
                    "trained"
                } else {
                    "untrained"
                }
            );
            adopt_every_head(&label, &mut page, &mut worker, &mut local);
        }
    }
    // The symmetric difference (its extra map `shift₋(A)`).
    let mk = || {
        let mut e = Explorer::new(Model::untrained());
        e.set_text(text);
        e.update_maps(|m| m.heads = 4).unwrap();
        e.update_shift(|s| s.difference = Difference::Symmetric)
            .unwrap();
        e
    };
    let (mut page, mut worker, mut local) = (mk(), mk(), mk());
    adopt_every_head("symmetric", &mut page, &mut worker, &mut local);
}

#[test]
fn a_head_computed_before_a_slider_moved_is_refused_and_changes_nothing() {
    let mk = || {
        let mut e = Explorer::new(trained("shift_diff"));
        e.set_text("the cat sat on the mat and then it slept");
        e
    };
    let (mut page, mut worker) = (mk(), mk());
    page.compute().unwrap();
    let parts = worker.export_head(1).unwrap();
    let key = page.head_key().unwrap();
    // A person moves the shift: the reply computed before is for other settings.
    page.update_shift(|s| s.shift += 1).unwrap();
    page.compute().unwrap();
    assert_ne!(page.head_key().unwrap(), key);
    let r = page.recomputations();
    assert!(!page.adopt_head(parts.clone()).unwrap());
    assert_eq!(page.recomputations(), r);
    assert!(page.missing_heads().contains(&1));
    // And back: the same settings have the same key, and the reply fits again.
    page.update_shift(|s| s.shift -= 1).unwrap();
    page.compute().unwrap();
    assert_eq!(page.head_key().unwrap(), key);
    assert!(page.adopt_head(parts).unwrap());
    // A mirror whose gate is the sliders' (moved and back) while the page's is learned has
    // another key: its heads would have other bits.
    let mut moved = mk();
    let alpha = moved.settings().shift.alpha;
    moved.update_shift(|s| s.alpha = alpha + 0.5).unwrap();
    moved.update_shift(|s| s.alpha = alpha).unwrap();
    assert_eq!(moved.overrides(), (true, false));
    assert_ne!(moved.head_key().unwrap(), key);
    moved.set_overrides(false, false);
    assert_eq!(moved.head_key().unwrap(), key);
    // Another sentence, another model, another head count: other keys.
    let mut other = mk();
    other.set_text("the cat sat on the mat");
    assert_ne!(other.head_key().unwrap(), key);
    let mut other = mk();
    other.set_model(Model::untrained());
    assert_ne!(other.head_key().unwrap(), key);
    let mut other = mk();
    other
        .update_maps(|m| m.heads = if m.heads == 1 { 2 } else { 1 })
        .unwrap();
    assert_ne!(other.head_key().unwrap(), key);
    // Nothing drawn, no key.
    let mut empty = mk();
    empty.set_text("");
    assert_eq!(empty.head_key().unwrap(), None);
    assert!(empty.export_head(0).is_err());
}

#[test]
fn a_head_adopted_before_the_shown_one_brings_the_projections_and_keeps_its_maps() {
    let mk = || {
        let mut e = Explorer::new(Model::untrained());
        e.set_text("one two three four five");
        e.update_maps(|m| m.heads = 4).unwrap();
        e
    };
    let (mut page, mut worker, mut local) = (mk(), mk(), mk());
    // The page has not computed its shown head yet (a new sentence in the all-heads view):
    // adopting makes the projections, as computing the head would, once.
    let parts = worker.export_head(3).unwrap();
    assert!(page.adopt_head(parts).unwrap());
    assert_eq!(page.recomputations().adopted, 1);
    assert_eq!(page.recomputations().projections, 1);
    assert_eq!(page.recomputations().maps, 0);
    page.compute_all().unwrap();
    local.compute_all().unwrap();
    assert_eq!(page.recomputations().projections, 1);
    assert_eq!(page.maps(StageId::Fused), local.maps(StageId::Fused));
    // The shown head's stages move, the adopted head keeps its maps: only its shift stages
    // are missing, computed here (not worth sending away).
    page.update_shift(|s| s.shift += 1).unwrap();
    page.compute().unwrap();
    assert!(page.missing_heads().contains(&3));
    assert!(!page.heads_without_maps().contains(&3));
    let r = page.recomputations();
    while page.compute_next_with_maps().unwrap() {}
    assert!(page.missing_heads().is_empty());
    assert_eq!(page.recomputations().shift_stages - r.shift_stages, 3);
    assert_eq!(page.recomputations().maps, r.maps);
}

#[test]
fn a_key_is_sixteen_hex_digits_both_ways() {
    let k = HeadKey(0x0123_4567_89ab_cdef);
    assert_eq!(k.to_hex(), "0123456789abcdef");
    assert_eq!(HeadKey::from_hex("0123456789abcdef"), Some(k));
    assert_eq!(HeadKey::from_hex("123"), None);
    assert_eq!(HeadKey::from_hex("0123456789abcdeg"), None);
}
