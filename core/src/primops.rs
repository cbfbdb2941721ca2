//! Scalar operation semantics. (Being written.)
