//! Flattening: from the SOAC IR to the kernel IR ([`crate::seg`]) (to be written).
