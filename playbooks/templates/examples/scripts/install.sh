#!/bin/sh
# Installs the packages given as the "packages" input of the software config.
# Heat's script hook passes inputs as environment variables and reads each
# output from the file ${heat_outputs_path}.NAME.
set -eu
packages=${packages:?the packages input is required}
heat_outputs_path=${heat_outputs_path:?set by the script hook}
for package in $(echo "${packages}" | tr ',' ' '); do
    apt-get install -y "$package"
done
echo "installed: ${packages}" > "${heat_outputs_path}.result"
