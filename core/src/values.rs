//! Value formats. (Being written.)
