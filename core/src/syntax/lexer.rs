//! Tokens. (Being written.)
