# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The example templates shipped in playbooks/templates/examples, applied from the
installed collection by one real ansible-playbook run, checked, then deleted."""

from __future__ import annotations

import hashlib
import re
import uuid

from conftest import INSTALLED

SHIPPED = INSTALLED / "ansible_collections" / "hotplay" / "stacks" / "playbooks" / "templates" / "examples"

# name -> (template, environment files, parameters)
EXAMPLES = {
    "legacy_cfn": ("legacy_cfn.yaml", [], {}),
    "cfn_site": ("cfn_site.template", [], {"Environment": "production"}),
    "boot_config": ("boot_config.yaml", [], {}),
    "firewall": ("firewall.yaml", [], {}),
    "inventory": ("inventory.yaml", [], {}),
    "labels": ("labels.yaml", [], {"labels": {"tier": "web", "team": "storefront"}}),
    "conditions": ("conditions.yaml", [], {}),
    "conditions_dev": ("conditions.yaml", [], {"env_type": "development"}),
    "dns_records": ("dns_records.yaml", [], {}),
    "endpoints": ("endpoints.yaml", [], {}),
    "parameters": ("parameters.yaml", [], {"admin_password": "correct horse battery"}),
    "groups": ("groups.yaml", [], {}),
    "site": ("site.yaml", ["site_env.yaml"], {}),
}


def _apply(name: str) -> dict:
    template, environment, parameters = EXAMPLES[name]
    return {
        "name": f"apply {name}",
        "hotplay.stacks.stack": {
            "name": name,
            "template": str(SHIPPED / template),
            "environment": [str(SHIPPED / e) for e in environment],
            "parameters": parameters,
            "nested_depth": 1,
        },
        "register": f"ex_{name}",  # "groups" alone is a reserved Ansible variable
    }


def _delete(name: str) -> dict:
    return {"name": f"delete {name}", "hotplay.stacks.stack": {"name": name, "state": "absent"},
            "register": f"ex_{name}_deleted"}


def test_every_example_applies_gives_its_outputs_and_deletes(run_tasks):
    run = run_tasks(
        [_apply(name) for name in EXAMPLES]
        + [{"hotplay.stacks.stack_info": {"name": "groups", "nested_depth": 1, "events": False},
            "register": "ex_groups_info"}]
        + [_delete(name) for name in EXAMPLES]
        + [{"hotplay.stacks.stack_info": {}, "register": "listing"}],
        name="examples",
        # parameters.yaml is given a hidden value: the store keeps it only encrypted.
        env={"HOTPLAY_STORE_KEY": "examples-store-key"},
    )
    results = {key.removeprefix("ex_"): value for key, value in run.results.items()}
    for name in EXAMPLES:
        assert results[name]["stack_status"] == "CREATE_COMPLETE", (name, results[name])
        assert results[name]["output_errors"] == {}, (name, results[name]["output_errors"])
        deleted = results[f"{name}_deleted"]
        assert deleted["stack_status"] == "DELETE_COMPLETE", (name, deleted)
    assert results["listing"]["stacks"] == []

    check_legacy_cfn(results["legacy_cfn"])
    check_cfn_site(results["cfn_site"])
    check_boot_config(results["boot_config"])
    check_firewall(results["firewall"]["outputs"])
    check_inventory(results["inventory"]["outputs"])
    check_labels(results["labels"]["outputs"])
    check_conditions(results["conditions"], results["conditions_dev"], results["conditions_deleted"])
    check_dns_records(results["dns_records"]["outputs"])
    check_endpoints(results["endpoints"]["outputs"])
    check_parameters(results["parameters"], run.stdout)
    check_groups(results["groups"], results["groups_info"])
    check_site(results["site"])


def physical_ids(result: dict) -> dict:
    return {r["name"]: r["physical_id"] for r in result["resources"]}


def check_legacy_cfn(result: dict) -> None:
    out = result["outputs"]
    assert out["url"] == "https://www.example.org:443"
    assert out["banner"] == "legacy_cfn serves https://www.example.org:443"
    assert out["site_id"] == out["site_id_again"] == physical_ids(result)["site"]
    assert out["tls_port"] == 443
    assert out["hosts"] == ["web1", "web2", "web3"]
    assert out["user_data"] == "#!/bin/sh\necho hello\n"
    assert out["zones"] == ["nova"]
    assert out["tags"] == {"team": "web", "tier": "frontend"}
    assert out["summary"] == "example.org on ports 80/443/8080"


def check_cfn_site(result: dict) -> None:
    out = result["outputs"]
    assert out["site"] == "cfn_site-large-east-live"
    assert (out["disk"], out["replicas"], out["region"]) == (100, 2, "ap-southeast-1")
    assert re.fullmatch(r"[A-Za-z0-9]{6}", out["suffix"])
    assert re.fullmatch(r"arn:openstack:heat::hotplay:stacks/cfn_site/[0-9a-f-]{36}", out["stack_id"])
    assert out["banner"] is None  # its condition is false in production
    assert result["parameters"]["AdminPassword"] == "******"


def check_boot_config(result: dict) -> None:
    out = result["outputs"]
    assert out["script"] == (SHIPPED / "scripts" / "install.sh").read_text()
    assert out["settings"] == {"admin": "ops", "web_server": "nginx"}
    assert out["cloud_config"] == (
        "#cloud-config\npackages:\n- nginx\n- git\nusers:\n- name: ops\n  sudo: ALL=(ALL) NOPASSWD:ALL\n")
    message = out["user_data"]
    assert message.startswith("Content-Type: multipart/mixed; boundary=")
    assert message.count("Content-Type: text/") == 3
    assert 'Content-Type: text/x-shellscript; charset="us-ascii"' in message
    assert 'Content-Disposition: attachment; filename="motd.txt"' in message
    # The parts given as config ids hold the configs' texts.
    assert out["cloud_config"] in message and out["script"] in message
    assert str(uuid.UUID(out["config_id"])) == out["config_id"] == physical_ids(result)["install_script"]


def check_firewall(out: dict) -> None:
    lines = ["allow tcp/80 from 10.0.0.0/8", "allow tcp/80 from 192.168.0.0/16",
             "allow tcp/443 from 10.0.0.0/8", "allow tcp/443 from 192.168.0.0/16"]
    assert [(r["port_range_min"], r["remote_ip_prefix"]) for r in out["rules"]] == [
        ("80", "10.0.0.0/8"), ("80", "192.168.0.0/16"), ("443", "10.0.0.0/8"), ("443", "192.168.0.0/16")]
    assert out["rules"][0] == {"protocol": "tcp", "port_range_min": "80", "port_range_max": "80",
                               "remote_ip_prefix": "10.0.0.0/8"}
    assert out["last_rule"] == lines[3]
    assert out["listing"] == "\n".join(lines)
    assert out["fingerprint"] == hashlib.sha256("\n".join(lines).encode()).hexdigest()


def check_inventory(out: dict) -> None:
    assert out["host"] == "db01"
    assert out["domain_parts"] == ["db01", "eu-west", "example", "com"]
    assert out["database_attributes"] == {"output": "db01"}
    assert set(out["password_attributes"]) == {"value"}
    assert re.fullmatch(r"[A-Za-z0-9]{20}", out["password_attributes"]["value"])
    assert out["groups"] == "databases,eu-west,backup,monitoring"
    assert out["record"] == 'host {"name": "db01", "port": 5432}'
    assert out["ansible_line"] == (
        "db01 ansible_host=db01.eu-west.example.com groups='[\"backup\", \"monitoring\"]'")


def check_labels(out: dict) -> None:
    assert out["labels"] == {"managed-by": "heat", "tier": "web", "team": "storefront", "stack": "labels"}
    assert str(uuid.UUID(out["placeholder_id"])) == out["placeholder_id"]
    assert out["placeholder_attribute"] is None


def check_conditions(prod: dict, dev: dict, prod_deleted: dict) -> None:
    replicas = {"total_replicas": 5, "regions": {"europe": 3, "america": 2},
                "endpoints": ["https://eu-west.example.com", "https://us-east.example.com"],
                "bucket_id": "bucket-7f3e"}
    assert prod["outputs"] == {"database_size": "db-large", "backup_schedule": "0 3 * * *",
                               "debug_console": None, "tier": "shared", **replicas}
    assert dev["outputs"] == {"database_size": "db-small", "backup_schedule": None,
                              "debug_console": "enabled", "tier": "private", **replicas}
    assert {r["name"] for r in prod["resources"]} == {"database", "backup_schedule", "bucket", "total_replicas"}
    assert {r["name"] for r in dev["resources"]} == {"database", "debug_console", "bucket", "total_replicas"}
    assert physical_ids(prod)["bucket"] == "bucket-7f3e"
    done = {e["resource_name"] for e in prod_deleted["events"]
            if e["action"] == "DELETE" and e["status"] == "COMPLETE"}
    assert {"database", "bucket", "backup_schedule", "total_replicas"} <= done


def check_dns_records(out: dict) -> None:
    assert out == {"pool": ["web1", "web3", "web4"], "record": 'pool 300 IN TXT "web1 web3 web4"'}


def check_endpoints(out: dict) -> None:
    assert out == {
        "admin_url": "https://operator@admin.example.com:9443/v1/status%20page?verbose=true&zone=eu-west",
        "service_urls": ["https://api.example.com:8443/", "https://admin.example.com:9443/"],
        "zones": ["eu-west", "eu-west", "eu-central"],
        "unique_zones": ["eu-west", "eu-central"],
        "has_metrics": True,
        "placement": "spread",
        "motd": "Welcome to endpoints (tls, metrics)",
    }


def check_parameters(result: dict, stdout: str) -> None:
    assert result["outputs"] == {
        "server": {"name": "db-main", "cpus": 4, "memory_gib": 8, "zones": ["zone-a", "zone-b"],
                   "tls": True, "options": {"max_connections": 200, "shared_buffers": "2GB"}},
        "password_length": 21,
        "first_zone": "zone-a",
        "max_connections": 200,
    }
    assert result["parameters"]["admin_password"] == "******"
    assert result["parameters"]["enable_tls"] is True
    assert result["parameters"]["zones"] == ["zone-a", "zone-b"]
    assert "correct horse battery" not in stdout


def check_groups(result: dict, info: dict) -> None:
    out = result["outputs"]
    ids = physical_ids(result)
    members = ["0", "2", "3"]
    assert out["worker_outputs"] == ["worker-0", "worker-2", "worker-3"]
    assert out["worker_refs"] == [ids[f"workers/{m}"] for m in members]
    assert out["worker_refs_map"] == {m: ids[f"workers/{m}"] for m in members}
    assert out["outputs_by_member"] == {m: f"worker-{m}" for m in members}
    assert out["second_worker"] == "worker-2"
    assert out["second_worker_ref"] == ids["workers/2"]
    assert out["migration_values"] == ["schema-ready", "schema-ready"]
    assert out["monitoring_outputs"] == {"watched": "worker-0,worker-2,worker-3"}
    assert out["monitoring_stack_name"].startswith("groups-monitoring-")
    names = [r["name"] for r in info["stack"]["resources"]]
    assert names == ["workers", "workers/0", "workers/2", "workers/3", "migrations", "migrations/0",
                     "migrations/1", "monitoring", "monitoring/check"]
    assert "events" not in info["stack"]


def check_site(result: dict) -> None:
    out = result["outputs"]
    assert out["frontend_fqdn"] == "shop-www.example.net"
    assert out["frontend_listener"] == {"port": 443, "certificate": "/etc/ssl/site.pem",
                                        "protocols": ["http", "https"]}
    assert out["backend_listener"] == {"port": 8080, "protocols": ["http"]}
    assert out["frontend_metadata"] == {"role": "frontend"}
    assert out["site_config"] == {"frontend": "shop-www.example.net", "backend": "shop-app.example.net",
                                  "options": ["compression", "hsts"]}
    assert out["session_key_length"] == 24
    types = {r["name"]: r["type"] for r in result["resources"]}
    assert types["frontend"] == "Site::WebServer" and types["frontend/host"] == "OS::Heat::TestResource"
    assert types["session_key"] == "Site::Util::RandomString"
    assert result["parameters"] == {"site_name": "shop", "with_tls": True}
