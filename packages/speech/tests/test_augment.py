"""Augmentation: seeded draws repeat, masks and warps do what they say, noise lands at its SNR."""

import numpy as np
import pytest

from paddlectl.framework.errors import ConfigError
from paddlectl.speech.augment import SpecAugment, add_noise, high_shelf, noise, reverberate, speed_perturb, tilt
from paddlectl.speech.task import WaveAugment


def _tone(n=16000, freq=400.0):
    return (0.5 * np.sin(2 * np.pi * freq * np.arange(n) / 16000)).astype(np.float32)


def test_speed_perturbation_changes_length_and_pitch_together():
    fast = speed_perturb(_tone(), np.random.default_rng(0), speeds=(1.25,))
    assert len(fast) == 12800  # 1 s at 1.25x lasts 0.8 s
    assert np.argmax(np.abs(np.fft.rfft(fast))) * 16000 / len(fast) == pytest.approx(500.0, abs=2)
    np.testing.assert_array_equal(speed_perturb(_tone(), np.random.default_rng(0), speeds=(1.0,)), _tone())
    with pytest.raises(ConfigError, match="positive"):
        speed_perturb(_tone(), np.random.default_rng(0), speeds=(0.0,))


@pytest.mark.parametrize("kind", ["white", "pink", "brown"])
def test_noise_is_added_at_the_drawn_snr(kind):
    wave = _tone()
    noisy = add_noise(wave, np.random.default_rng(1), snr_db=(12.0, 12.0), kind=kind)
    snr = 10 * np.log10(np.mean(wave.astype(float) ** 2) / np.mean((noisy - wave).astype(float) ** 2))
    assert snr == pytest.approx(12.0, abs=1e-3)
    again = add_noise(wave, np.random.default_rng(1), snr_db=(12.0, 12.0), kind=kind)
    np.testing.assert_array_equal(noisy, again)


def test_coloured_noise_has_its_slope():
    def low_to_high(kind):
        power = np.abs(np.fft.rfft(noise(kind, 1 << 15, np.random.default_rng(2)))) ** 2
        return power[100:1000].mean() / power[10000:16000].mean()

    assert low_to_high("white") < 2 < low_to_high("pink") < low_to_high("brown")


def test_a_noise_clip_is_tiled_and_a_silent_one_refused():
    clip = noise("white", 1000, np.random.default_rng(3))
    noisy = add_noise(_tone(), np.random.default_rng(4), snr_db=(0.0, 0.0), noise_wave=clip)
    assert noisy.shape == (16000,)
    with pytest.raises(ConfigError, match="silent"):
        add_noise(_tone(), np.random.default_rng(4), noise_wave=np.zeros(10))


def test_reverberation_decays_at_its_rt60_and_keeps_length_and_level():
    click = np.zeros(16000, np.float32)
    click[100] = 1.0

    def tail_energy(rt60):
        wet = reverberate(click, np.random.default_rng(9), rt60=(rt60, rt60))
        assert wet.shape == click.shape and np.sqrt(np.mean(wet**2)) == pytest.approx(np.sqrt(1e-4 / 1.6), rel=1e-5)
        return float(np.sum(wet[100 + 1600 :] ** 2))  # after 100 ms

    assert 0.0 < tail_energy(0.2) < tail_energy(0.6)
    assert (
        np.abs(reverberate(click, np.random.default_rng(9), rt60=(0.1, 0.1))[100 + 1600 :]).max() < 1e-9
    )  # all decayed
    np.testing.assert_array_equal(
        reverberate(_tone(), np.random.default_rng(10)), reverberate(_tone(), np.random.default_rng(10))
    )
    np.testing.assert_array_equal(reverberate(_tone(), np.random.default_rng(10), rt60=(0.0, 0.0)), _tone())
    with pytest.raises(ConfigError, match="rt60"):
        reverberate(_tone(), np.random.default_rng(0), rt60=(0.5, 0.1))


def test_tilt_falls_by_its_slope_per_octave_above_the_corner_and_keeps_the_level():
    white = noise("white", 1 << 15, np.random.default_rng(11))
    tilted = tilt(white, np.random.default_rng(12), db_per_octave=(-6.0, -6.0))
    freqs = np.fft.rfftfreq(len(white), 1 / 16000)

    def gain_db(low, high):
        band = (freqs >= low) & (freqs < high)
        return 10 * np.log10(
            np.sum(np.abs(np.fft.rfft(tilted)[band]) ** 2) / np.sum(np.abs(np.fft.rfft(white)[band]) ** 2)
        )

    flat = gain_db(200, 900)
    assert gain_db(1900, 2100) - flat == pytest.approx(-6.0, abs=0.2)
    assert gain_db(3900, 4100) - flat == pytest.approx(-12.0, abs=0.2)
    assert np.sqrt(np.mean(tilted**2)) == pytest.approx(np.sqrt(np.mean(white**2)), rel=1e-5)
    np.testing.assert_array_equal(tilt(white, np.random.default_rng(0), db_per_octave=(0.0, 0.0)), white)
    with pytest.raises(ConfigError, match="db_per_octave"):
        tilt(white, np.random.default_rng(0), db_per_octave=(2.0, -8.0))


def _sweep(seconds=4.0, low=50.0, high=7950.0):
    """A linear sine sweep: every frequency from ``low`` to ``high`` at one amplitude."""
    t = np.arange(int(seconds * 16000)) / 16000
    return (0.5 * np.sin(2 * np.pi * (low * t + (high - low) * t**2 / (2 * seconds)))).astype(np.float32)


def _band_gain_db(before, after, low, high):
    freqs = np.fft.rfftfreq(len(before), 1 / 16000)
    band = (freqs >= low) & (freqs < high)
    return 10 * np.log10(np.sum(np.abs(np.fft.rfft(after)[band]) ** 2) / np.sum(np.abs(np.fft.rfft(before)[band]) ** 2))


@pytest.mark.parametrize(("drop", "corner"), [(10.0, 2500.0), (35.0, 5000.0), (22.0, 3600.0)])
def test_high_shelf_drops_a_sweep_by_its_depth_above_the_corner_and_keeps_the_level(drop, corner):
    sweep = _sweep()
    limited = high_shelf(sweep, np.random.default_rng(13), drop_db=(drop, drop), corner_hz=(corner, corner))
    flat = _band_gain_db(sweep, limited, 200, corner / np.sqrt(2) - 100)
    assert _band_gain_db(sweep, limited, corner + 100, 7900) - flat == pytest.approx(-drop, abs=0.5)
    halfway = corner * 2**-0.25  # the ramp is linear in log-frequency over the half octave under the corner
    assert _band_gain_db(sweep, limited, halfway - 20, halfway + 20) - flat == pytest.approx(-drop / 2, abs=1.0)
    assert np.sqrt(np.mean(limited**2)) == pytest.approx(np.sqrt(np.mean(sweep**2)), rel=1e-5)


def test_high_shelf_draws_its_depth_and_corner_from_the_seed():
    sweep = _sweep(1.0)
    np.testing.assert_array_equal(
        high_shelf(sweep, np.random.default_rng(14)), high_shelf(sweep, np.random.default_rng(14))
    )
    assert not np.array_equal(
        high_shelf(sweep, np.random.default_rng(14)), high_shelf(sweep, np.random.default_rng(15))
    )
    drops = [
        -_band_gain_db(sweep, high_shelf(sweep, np.random.default_rng(seed), corner_hz=(3000, 3000)), 3100, 7900)
        + _band_gain_db(sweep, high_shelf(sweep, np.random.default_rng(seed), corner_hz=(3000, 3000)), 200, 2000)
        for seed in range(20)
    ]
    assert 10.0 - 0.5 <= min(drops) < 15.0 and 30.0 < max(drops) <= 35.0 + 0.5
    np.testing.assert_array_equal(high_shelf(sweep, np.random.default_rng(0), drop_db=(0.0, 0.0)), sweep)
    with pytest.raises(ConfigError, match="drop_db"):
        high_shelf(sweep, np.random.default_rng(0), drop_db=(-5.0, 10.0))
    with pytest.raises(ConfigError, match="corner_hz"):
        high_shelf(sweep, np.random.default_rng(0), corner_hz=(5000.0, 2500.0))


def test_wave_augment_applies_the_shelf_at_its_probability():
    sweep = _sweep(1.0)
    shelf = WaveAugment(
        speeds=(1.0,), noise_prob=0.0, shelf_prob=1.0, shelf_drop_db=(30, 30), shelf_corner_hz=(3000, 3000)
    )
    np.random.seed(16)
    limited = shelf(sweep)
    assert _band_gain_db(sweep, limited, 3100, 7900) - _band_gain_db(sweep, limited, 200, 2000) == pytest.approx(
        -30, abs=0.5
    )
    np.random.seed(16)
    np.testing.assert_array_equal(shelf(sweep), limited)
    np.testing.assert_array_equal(WaveAugment(speeds=(1.0,), noise_prob=0.0, shelf_prob=0.0)(sweep), sweep)


def test_wave_augment_refuses_bad_probabilities():
    with pytest.raises(ConfigError, match="reverb_prob"):
        WaveAugment(reverb_prob=1.5)
    with pytest.raises(ConfigError, match="rt60"):
        WaveAugment(rt60=[0.1])
    with pytest.raises(ConfigError, match="tilt_prob"):
        WaveAugment(tilt_prob=-0.1)
    with pytest.raises(ConfigError, match="tilt_db_per_octave"):
        WaveAugment(tilt_db_per_octave=[-6.0])
    with pytest.raises(ConfigError, match="shelf_prob"):
        WaveAugment(shelf_prob=2.0)
    with pytest.raises(ConfigError, match="shelf_corner_hz"):
        WaveAugment(shelf_corner_hz=[3000.0])


def test_spec_augment_masks_within_bounds_and_repeats_with_the_seed():
    features = np.random.default_rng(5).standard_normal((200, 80)).astype(np.float32) + 10
    aug = SpecAugment(max_time_warp=0, n_freq_masks=2, max_freq_width=10, n_time_masks=2, max_time_width=40)
    out = aug(features, np.random.default_rng(6))
    masked_bins = np.all(out == 0.0, axis=0).sum()
    masked_frames = np.all(out == 0.0, axis=1).sum()
    assert 0 < masked_bins <= 20 and 0 < masked_frames <= 80
    kept = out != 0.0
    np.testing.assert_array_equal(out[kept], features[kept])
    np.testing.assert_array_equal(out, aug(features, np.random.default_rng(6)))
    assert not np.array_equal(out, aug(features, np.random.default_rng(7)))


def test_time_warp_moves_a_frame_and_keeps_the_ends():
    ramp = np.repeat(np.arange(100, dtype=np.float32)[:, None], 3, axis=1)
    warped = SpecAugment(max_time_warp=10).time_warp(ramp, np.random.default_rng(8))
    assert warped.shape == ramp.shape and warped[0, 0] == 0 and warped[-1, 0] == 99
    assert np.all(np.diff(warped[:, 0]) > 0) and not np.allclose(warped, ramp)


def test_bad_settings():
    with pytest.raises(ConfigError, match="max_freq_width"):
        SpecAugment(max_freq_width=-1)
    with pytest.raises(ConfigError, match=r"\(frames, bins\)"):
        SpecAugment()(np.zeros(10), np.random.default_rng(0))
