"""LaunchConfig's error for arguments it does not take (older cuda.core examples pass stream=)."""

import pytest

import nanocuda


def test_unknown_keyword_is_named_with_the_accepted_ones():
    with pytest.raises(TypeError, match=r"^LaunchConfig: unknown argument 'stream'; it takes grid, block, .*"
                                        r"a stream goes to launch\(stream, config, kernel, \*args\)$"):
        nanocuda.LaunchConfig(grid=1, block=1, stream=object())
    with pytest.raises(TypeError, match=r"unknown argument 'blocks', 'shmem'; it takes"):
        nanocuda.LaunchConfig(grid=1, blocks=1, shmem=0)


def test_positional_arguments_are_refused_by_name():
    with pytest.raises(TypeError, match=r"^LaunchConfig: takes keyword arguments only"):
        nanocuda.LaunchConfig(4, 128)


def test_valid_calls_still_take_the_keyword_overload():
    c = nanocuda.LaunchConfig(grid=(2,), block=32, shmem_size=16, is_cooperative=False)
    assert (c.grid, c.block, c.shared_mem) == ((2, 1, 1), (32, 1, 1), 16)
    with pytest.raises(TypeError, match=r"LaunchConfig: grid= and block= are required"):
        nanocuda.LaunchConfig(grid=1)
