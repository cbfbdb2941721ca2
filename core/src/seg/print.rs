//! The kernel IR printer (to be written).
