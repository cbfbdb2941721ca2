//! IR checker. (Being written.)
