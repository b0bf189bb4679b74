"""The reader edition (`make book`): book/build.py and the modules it uses."""
