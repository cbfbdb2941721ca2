//! Feed arbitrary UTF-8 text to the front end (parse + type check after the prelude).
//! Any input may be rejected with diagnostics; none may panic or overflow the stack.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(src) = std::str::from_utf8(data) {
        if let Err(e) = vkad_core::check("fuzz.fut", src) {
            // Rendering the diagnostics must not panic either.
            let _ = e.render();
        }
    }
});
