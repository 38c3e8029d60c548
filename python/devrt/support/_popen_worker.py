# SPDX-License-Identifier: Apache-2.0
"""The worker process of popen_pool: reads pickled calls on stdin, answers on stdout.

Each message is an 8-byte little-endian length and a pickle. Requests: ("init", fn, args, kwargs)
or ("call", fn, args, kwargs); replies: (True, value) or (False, exception).
"""
import os
import pickle
import struct
import sys


def read_message(stream):
    header = stream.read(8)
    if len(header) < 8:
        return None
    (size,) = struct.unpack("<Q", header)
    return pickle.loads(stream.read(size))


def write_message(stream, message):
    payload = pickle.dumps(message)
    stream.write(struct.pack("<Q", len(payload)) + payload)
    stream.flush()


def main():
    requests = sys.stdin.buffer
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    # The called functions' prints go to stderr, never into the reply channel.
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    while True:
        request = read_message(requests)
        if request is None:
            return
        _, function, args, kwargs = request
        try:
            reply = (True, function(*args, **kwargs))
        except BaseException as error:  # the parent re-raises it
            reply = (False, error)
        try:
            write_message(replies, reply)
        except (pickle.PicklingError, TypeError, AttributeError) as error:
            write_message(replies, (False, RuntimeError(f"popen_pool: the result cannot be pickled: {error}")))


if __name__ == "__main__":
    main()
