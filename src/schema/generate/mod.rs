//! The generated files (placeholder).
