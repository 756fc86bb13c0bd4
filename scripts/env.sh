# Sourced (`source scripts/env.sh`): the environment tune is built and run in with
# training (`--features train`) — libtorch from the torch==2.13.0 virtual environment
# that `scripts/bootstrap.sh env` (or `test`) installs. A tune built without training
# needs none of it.
tune_venv="${TUNE_TORCH_VENV:-$HOME/.cache/tune/torch-venv}"
export LIBTORCH_USE_PYTORCH=1
export PATH="$tune_venv/bin:$PATH"
for tune_torch_lib in "$tune_venv"/lib/python3*/site-packages/torch/lib; do
  if [ -d "$tune_torch_lib" ]; then
    export LD_LIBRARY_PATH="$tune_torch_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
done
unset tune_venv tune_torch_lib
