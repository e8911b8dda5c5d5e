//! Which GPUs the CUDA driver is shown: counted and narrowed through `CUDA_VISIBLE_DEVICES`
//! before the driver starts, never after. One test in its own process, since it sets the
//! process's environment.

use genie_core::backend::cuda::{device_count, show_only, visible_count};

#[test]
fn the_gpus_shown_are_narrowed_before_the_driver_starts_and_never_after() {
    std::env::set_var("CUDA_VISIBLE_DEVICES", "0,1,-1,2");
    assert_eq!(
        visible_count(),
        2,
        "the list ends at the first entry that names none"
    );
    std::env::set_var("CUDA_VISIBLE_DEVICES", "-1");
    assert_eq!(visible_count(), 0);

    std::env::remove_var("CUDA_VISIBLE_DEVICES");
    assert_eq!(show_only(&[2, 3]), Some(vec![0, 1]), "renumbered from 0");
    assert_eq!(std::env::var("CUDA_VISIBLE_DEVICES").as_deref(), Ok("2,3"));
    assert_eq!(visible_count(), 2);
    // ordinals of the list shown now: the second of "2,3" is GPU 3
    assert_eq!(show_only(&[1]), Some(vec![0]));
    assert_eq!(std::env::var("CUDA_VISIBLE_DEVICES").as_deref(), Ok("3"));
    assert_eq!(show_only(&[1]), None, "past the list: nothing changed");
    assert_eq!(std::env::var("CUDA_VISIBLE_DEVICES").as_deref(), Ok("3"));
    std::env::set_var("CUDA_VISIBLE_DEVICES", "GPU-aaaa, GPU-bbbb");
    assert_eq!(show_only(&[1]), Some(vec![0]), "entries kept as named");
    assert_eq!(
        std::env::var("CUDA_VISIBLE_DEVICES").as_deref(),
        Ok("GPU-bbbb")
    );

    // once the driver has been called, what it shows is fixed: nothing changes
    std::env::set_var("CUDA_VISIBLE_DEVICES", "0,1");
    let _ = device_count();
    if cfg!(feature = "cuda") {
        assert_eq!(show_only(&[1]), None);
        assert_eq!(std::env::var("CUDA_VISIBLE_DEVICES").as_deref(), Ok("0,1"));
    }
}
