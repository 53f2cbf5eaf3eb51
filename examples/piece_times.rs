use diffattn::explorer::{Explorer, Need};
use diffattn::model::Model;
use std::time::Instant;
fn main() {
    let words = "the film was not good but the actors were wonderful"
        .split(' ')
        .collect::<Vec<_>>();
    let text: Vec<&str> = (0..2048).map(|i| words[i % words.len()]).collect();
    let mut e = Explorer::new(Model::untrained());
    e.set_text(&text.join(" "));
    e.update_maps(|m| m.heads = 8).unwrap();
    e.compute().unwrap();
    for k in 2..5 {
        e.update_shift(|s| s.shift = k).unwrap();
        let mut times = Vec::new();
        let t0 = Instant::now();
        loop {
            let t = Instant::now();
            if !e.work(Need::Shown).unwrap() {
                break;
            }
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
        println!(
            "shift {k}: {:.1} ms total, pieces {:?}",
            t0.elapsed().as_secs_f64() * 1e3,
            times
                .iter()
                .map(|t| (t * 10.0).round() / 10.0)
                .collect::<Vec<_>>()
        );
    }
}
