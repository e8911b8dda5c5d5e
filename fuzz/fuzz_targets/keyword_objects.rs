#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| genie_fuzz::keyword_objects(data));
