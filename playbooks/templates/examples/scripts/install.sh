#!/bin/sh
# Installs the packages given as the "packages" input of the software config.
set -eu
for package in $(echo "${packages}" | tr ',' ' '); do
    apt-get install -y "$package"
done
echo "installed: ${packages}" > "${heat_outputs_path}.result"
