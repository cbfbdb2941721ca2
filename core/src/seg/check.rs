//! The kernel IR checker (to be written).
