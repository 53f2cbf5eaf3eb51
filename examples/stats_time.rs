use diffattn::render::MapStats;
use ndarray::Array2;
use std::time::Instant;
fn sel(cells: &[f32]) -> (f32, f32) {
    let mut lo = [f32::INFINITY; 16];
    let mut hi = [f32::NEG_INFINITY; 16];
    for chunk in cells.chunks_exact(16) {
        let c: &[f32; 16] = chunk.try_into().unwrap();
        for k in 0..16 {
            lo[k] = if c[k] < lo[k] { c[k] } else { lo[k] };
            hi[k] = if c[k] > hi[k] { c[k] } else { hi[k] };
        }
    }
    (
        lo.iter().fold(f32::INFINITY, |a, &b| a.min(b)),
        hi.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b)),
    )
}
fn main() {
    let m = Array2::<f32>::from_shape_fn((2048, 2048), |(i, j)| {
        ((i * 7 + j * 13) % 1000) as f32 / 1000.0
    });
    let c = m.as_slice().unwrap();
    for _ in 0..3 {
        let t = Instant::now();
        let s = MapStats::of(m.view());
        let t1 = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        let r = sel(c);
        let t2 = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        let z = sum(c);
        println!(
            "{:?} {:.2} ms; sel {:?} {:.2} ms; sum {z} {:.2} ms",
            s,
            t1,
            r,
            t2,
            t.elapsed().as_secs_f64() * 1e3
        );
    }
}
#[allow(dead_code)]
fn sum(c: &[f32]) -> f32 {
    let mut s = [0f32; 16];
    for ch in c.chunks_exact(16) {
        for k in 0..16 {
            s[k] += ch[k];
        }
    }
    s.iter().sum()
}
