//! IR printer. (Being written.)
