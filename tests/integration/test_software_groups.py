# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The other ways to describe software: an ``ansible`` group config, a structured
config with ``get_input``, a component with a config per action, and outputs of one
deployment feeding another's inputs."""

from __future__ import annotations

from conftest import BIN, write_template

TEMPLATE = """\
    heat_template_version: 2018-08-31
    parameters:
      server: {type: string}
      root: {type: string}
      greeting: {type: string, default: hello}
    resources:
      deployed_server:  # not "server", the parameter's name: Heat refuses duplicate names
        type: OS::Heat::DeployedServer
        properties: {name: {get_param: server}}
      tasks_config:
        type: OS::Heat::SoftwareConfig
        properties:
          group: ansible
          inputs: [{name: root}, {name: greeting}]
          outputs: [{name: written}]
          config: |
            - ansible.builtin.copy:
                dest: "{{ root }}/greeting.txt"
                content: "{{ greeting }}"
                mode: "0644"
              register: written
      tasks:
        type: OS::Heat::SoftwareDeployment
        properties:
          config: {get_resource: tasks_config}
          server: {get_resource: deployed_server}
          input_values:
            root: {get_param: root}
            greeting: {get_param: greeting}
      structured_config:
        type: OS::Heat::StructuredConfig
        properties:
          group: ansible
          config:
            tasks:
              - ansible.builtin.copy:
                  dest: {get_input: path}
                  content: {get_input: content}
                  mode: "0600"
      structured:
        type: OS::Heat::StructuredDeployment
        properties:
          config: {get_resource: structured_config}
          server: {get_resource: deployed_server}
          input_values:
            path: {list_join: ["/", [{get_param: root}, structured.txt]]}
            # Another deployment's output feeds this one's input.
            content: {get_attr: [tasks, written, dest]}
      component:
        type: OS::Heat::SoftwareComponent
        properties:
          inputs: [{name: root}]
          configs:
            - actions: [CREATE]
              tool: script
              config: |
                #!/bin/sh
                echo created > "$root/component.txt"
            - actions: [UPDATE]
              tool: script
              config: |
                #!/bin/sh
                echo updated > "$root/component.txt"
      component_deployment:
        type: OS::Heat::SoftwareDeployment
        properties:
          config: {get_resource: component}
          server: {get_resource: deployed_server}
          input_values: {root: {get_param: root}, greeting: {get_param: greeting}}
    outputs:
      written: {value: {get_attr: [tasks, written, dest]}}
    """


def test_ansible_structured_and_component_configs(run_tasks, tmp_path):
    template = str(write_template(tmp_path, "groups.yaml", TEMPLATE))
    root = tmp_path / "host"
    root.mkdir()

    host_vars = {"hotplay_state_dir": str(tmp_path / "state"),
                 "ansible_python_interpreter": str(BIN / "python")}

    def apply(register: str, greeting: str) -> dict:
        parameters = {"server": "localhost", "root": str(root), "greeting": greeting}
        return {"hotplay.stacks.stack": {"name": "groups", "template": template,
                                         "parameters": parameters},
                "register": register, "vars": host_vars}

    first = run_tasks([apply("created", "hello"), apply("again", "hello")], name="first")
    created, again = first.results["created"], first.results["again"]
    assert created["stack_status"] == "CREATE_COMPLETE", created.get("msg")
    assert created["outputs"]["written"] == str(root / "greeting.txt")
    assert (root / "greeting.txt").read_text() == "hello"
    assert (root / "structured.txt").read_text() == str(root / "greeting.txt")
    assert (root / "component.txt").read_text().strip() == "created"
    assert again["changed"] is False
    updated = run_tasks([apply("updated", "bonjour")], name="second").results["updated"]
    assert updated["stack_status"] == "UPDATE_COMPLETE"
    assert (root / "greeting.txt").read_text() == "bonjour"
    assert (root / "component.txt").read_text().strip() == "updated"


SECRET_INPUT = """\
    heat_template_version: 2018-08-31
    parameters:
      token: {type: string, hidden: true}
    resources:
      deployed_server:
        type: OS::Heat::DeployedServer
        properties: {name: localhost}
      config:
        type: OS::Heat::SoftwareConfig
        properties:
          group: script
          inputs: [{name: token}]
          outputs: [{name: echoed}]
          config: |
            #!/bin/sh
            printf '%s' "$token" > "$heat_outputs_path.echoed"
      deployment:
        type: OS::Heat::SoftwareDeployment
        properties:
          config: {get_resource: config}
          server: {get_resource: deployed_server}
          input_values: {token: {get_param: token}}
    outputs:
      echoed: {value: {get_attr: [deployment, echoed]}}
    """


def test_a_hidden_input_leaves_no_plain_text_on_the_host(run_tasks, tmp_path):
    """The deployment's marker on the host would keep its outputs, made from a hidden
    parameter: it keeps nothing then (the same deployment again runs again)."""
    token = "tok-9Fq2-hidden"
    template = str(write_template(tmp_path, "secret.yaml", SECRET_INPUT))
    state = tmp_path / "state"
    run = run_tasks([{"hotplay.stacks.stack": {"name": "secret", "template": template,
                                               # as from a vault: not in the playbook file
                                               "parameters": {"token": "{{ lookup('env', 'TOKEN') }}"}},
                      "register": "secret",
                      "vars": {"hotplay_state_dir": str(state),
                               "ansible_python_interpreter": str(BIN / "python")}}],
                    env={"HOTPLAY_STORE_KEY": "key for the test", "TOKEN": token})
    result = run.results["secret"]
    assert result["stack_status"] == "CREATE_COMPLETE", result.get("msg")
    assert result["outputs"]["echoed"] == "******"
    left = [path for path in tmp_path.rglob("*") if path.is_file() and token.encode() in path.read_bytes()]
    assert left == [], f"the secret is in plain text in {left}"


UNGROUPED = """\
    heat_template_version: 2018-08-31
    resources:
      deployed_server:
        type: OS::Heat::DeployedServer
        properties: {name: localhost}
      config:
        type: OS::Heat::StructuredConfig
        properties:  # no group: Heat::Ungrouped, data for an agent on the server
          config: {settings: {debug: true}}
      deployment:
        type: OS::Heat::StructuredDeployment
        properties:
          config: {get_resource: config}
          server: {get_resource: deployed_server}
          signal_transport: NO_SIGNAL
    """


def test_an_ungrouped_structured_config_completes_without_running(run_tasks, tmp_path):
    """Heat completes a NO_SIGNAL deployment of a Heat::Ungrouped StructuredConfig:
    its data is for an agent on the server, and nothing runs here."""
    template = str(write_template(tmp_path, "ungrouped.yaml", UNGROUPED))
    run = run_tasks([{"hotplay.stacks.stack": {"name": "ungrouped", "template": template},
                      "register": "ungrouped",
                      "vars": {"hotplay_state_dir": str(tmp_path / "state"),
                               "ansible_python_interpreter": str(BIN / "python")}}])
    result = run.results["ungrouped"]
    assert result["stack_status"] == "CREATE_COMPLETE", result.get("msg")
    assert not (tmp_path / "state").exists()  # nothing ran on the host


FAILING_SCRIPT = """\
    heat_template_version: 2018-08-31
    parameters:
      transport: {type: string}
    resources:
      deployed_server:
        type: OS::Heat::DeployedServer
        properties: {name: localhost}
      config:
        type: OS::Heat::SoftwareConfig
        properties:
          group: script
          config: |
            #!/bin/sh
            echo "half done"
            echo "no such file" >&2
            exit 3
      deployment:
        type: OS::Heat::SoftwareDeployment
        properties:
          config: {get_resource: config}
          server: {get_resource: deployed_server}
          signal_transport: {get_param: transport}
    outputs:
      code: {value: {get_attr: [deployment, deploy_status_code]}}
      stdout: {value: {get_attr: [deployment, deploy_stdout]}}
    """


def test_a_failed_deployment_with_no_signal_completes_as_in_heat_and_the_task_warns(run_tasks, tmp_path):
    """Heat waits for no signal with NO_SIGNAL: the deployment completes whatever the
    server does.  Here the run saw the script fail: the attributes keep it, the task
    warns; with a signal (CFN_SIGNAL, Heat's default) the same failure fails it."""
    template = str(write_template(tmp_path, "failing.yaml", FAILING_SCRIPT))
    host_vars = {"hotplay_state_dir": str(tmp_path / "state"), "ansible_python_interpreter": str(BIN / "python")}
    run = run_tasks([{"hotplay.stacks.stack": {"name": transport.lower().replace("_", "-"), "template": template,
                                               "parameters": {"transport": transport}},
                      "register": transport.lower(), "vars": host_vars}
                     for transport in ("NO_SIGNAL", "CFN_SIGNAL")])
    quiet, signalled = run.results["no_signal"], run.results["cfn_signal"]
    assert quiet["stack_status"] == "CREATE_COMPLETE", quiet.get("msg")
    assert (quiet["outputs"]["code"], quiet["outputs"]["stdout"]) == (3, "half done\n")
    warning = ("no-signal.deployment CREATE: Deployment to server failed: deploy_status_code : Deployment "
               "exited with non-zero status code: 3: no such file; completed all the same, as Heat completes "
               "a deployment with signal_transport NO_SIGNAL")
    assert warning in " ".join((run.stdout + run.stderr).split()), run.stderr
    assert signalled["stack_status"] == "CREATE_FAILED"
    assert "non-zero status code: 3" in signalled["stack_status_reason"]


PLAYBOOK_CONFIG = """\
    heat_template_version: 2018-08-31
    parameters:
      root: {type: string}
    resources:
      deployed_server:
        type: OS::Heat::DeployedServer
        properties: {name: localhost}
      config:
        type: OS::Heat::SoftwareConfig
        properties:
          group: ansible
          inputs: [{name: root}, {name: colour, default: blue}]
          outputs: [{name: written}]
          config: |
            - hosts: localhost
              connection: local
              vars:
                colour: red       # the input (an extra var, for Heat's hook) wins
                shape: square
              pre_tasks:
                - ansible.builtin.file:
                    path: "{{ root }}/conf"
                    state: directory
                    mode: "0755"
              tasks:
                - ansible.builtin.copy:
                    dest: "{{ root }}/conf/settings"
                    content: "{{ colour }} {{ shape }}"
                    mode: "0644"
                  register: written
      deployment:
        type: OS::Heat::SoftwareDeployment
        properties:
          config: {get_resource: config}
          server: {get_resource: deployed_server}
          input_values: {root: {get_param: root}}
    outputs:
      written: {value: {get_attr: [deployment, written, dest]}}
    """


def test_an_ansible_config_that_is_a_playbook_runs_its_plays_tasks(run_tasks, tmp_path):
    """Heat's ansible hook runs a group: ansible config as a playbook on the server."""
    template = str(write_template(tmp_path, "playbook.yaml", PLAYBOOK_CONFIG))
    root = tmp_path / "host"
    root.mkdir()
    run = run_tasks([{"hotplay.stacks.stack": {"name": "playbook", "template": template,
                                               "parameters": {"root": str(root)}},
                      "register": "playbook",
                      "vars": {"hotplay_state_dir": str(tmp_path / "state"),
                               "ansible_python_interpreter": str(BIN / "python")}}])
    result = run.results["playbook"]
    assert result["stack_status"] == "CREATE_COMPLETE", result.get("msg")
    assert (root / "conf" / "settings").read_text() == "blue square"
    assert result["outputs"]["written"] == str(root / "conf" / "settings")
