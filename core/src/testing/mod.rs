//! Test runner. (Being written.)
