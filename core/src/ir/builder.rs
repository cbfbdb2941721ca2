//! IR builder. (Being written.)
