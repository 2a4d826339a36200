# -*- coding: utf-8 -*-
# Copyright: hotplay.stacks contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# Documentation only: the module is implemented by the action plugin
# plugins/action/stack.py, which runs the stack engine on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
---
module: stack
short_description: Create, update or delete a Heat orchestration stack without a Heat service
version_added: 0.1.0
description:
  - Applies an OpenStack Heat Orchestration Template (HOT) with its environment files
    and parameters as a named stack, or deletes the stack.
  - The engine runs inside C(ansible-playbook) on the controller. It builds the
    resource dependency graph, runs independent resources in parallel and follows
    Heat's update rules for each resource (unchanged, update in place, replace or
    delete).
  - Every apply is recorded as a new revision in the state store (O(store)), with
    the stack's resources and events.
  - Re-running with the same template, environment files and parameters reports
    C(changed=false) and touches no resource, unless the stack is paused at
    breakpoints (see below), which the re-run continues.
  - Errors in the template, environment files or parameters fail the task before
    anything is created; the store then holds no trace of the run.
  - A stack that ends in a C(*_FAILED) status fails the task; the result still
    carries the stack's status, resources and events.
  - A run can also pause at breakpoints (Heat's hooks), set by the environment's
    C(resource_registry) or by O(breakpoints). Then the branches that do not
    depend on a hooked resource finish, and the task returns without failing,
    with the stack C(CREATE_IN_PROGRESS), C(UPDATE_IN_PROGRESS) or
    C(DELETE_IN_PROGRESS) and the hooks in RV(hooks_pending). Once they are
    cleared with M(hotplay.stacks.stack_hook), running the same task again
    continues the run in the same revision, without redoing what is done; or
    O(wait_for_hooks) makes the task wait for them to be cleared from elsewhere.
    While a stack is paused, applying a different template, environment files or
    parameters is refused; go back with M(hotplay.stacks.stack_rollback) instead.
    See C(docs/breakpoints.md) in the collection.
  - One line per resource action is shown as it happens.
  - A second apply of the same stack while one is running (or waiting with
    O(wait_for_hooks)) fails, naming the holder of the stack's lock, at once or
    after waiting up to O(lock_timeout) seconds for the lock to be freed.
  - Updates follow Heat's rules. A resource is replaced when a changed property
    cannot be updated in place, when its type changed, or when its last action
    failed (a nested stack is converged again instead). A replacement creates the
    new resource first; the old one is deleted only after the whole update has
    succeeded.
  - Before anything is written, the task computes the update plan (RV(plan)) and
    checks the refusals; a refused update fails with C(changed=false), writes
    nothing and leaves the stack as it was. The refusals are a changed
    C(immutable) parameter, an action forbidden by the environment's
    C(restricted_actions) (see O(on_restricted)), a deletion or replacement of a
    resource protected by O(prevent_destroy), and a stale O(plan_id).
  - In check mode the task previews the update (RV(plan), with a warning for each
    resource that would be deleted or replaced) and writes nothing.
  - See C(docs/updates.md) in the collection for the update rules, the preview,
    reviewed plans and the guard rails.
options:
  name:
    description:
      - Name of the stack, unique within the store.
    type: str
    required: true
  state:
    description:
      - V(present) creates the stack, or updates it to the given template,
        environment files and parameters.
      - V(absent) deletes the stack's resources in reverse dependency order, then
        the stack. Resources whose C(deletion_policy) is C(Retain) are left in place and
        only forgotten. Deleting a stack that does not exist changes nothing.
    type: str
    choices: [present, absent]
    default: present
  template:
    description:
      - Path to the HOT template file on the controller. A relative path is
        looked up as Ansible looks up files (the role's files, then the playbook's
        directory).
      - Files that the template references (C(get_file), provider templates) are
        looked up relative to the template's directory, and read only from inside
        that directory tree or O(file_roots).
      - Required when O(state=present) (or O(template_body)), except for a PATCH
        update (O(existing=true)) of a stack that exists, which keeps the stored
        template when none is given.
      - Mutually exclusive with O(template_body).
    type: path
  template_body:
    description:
      - The template itself instead of a path, as text (such as from
        C(lookup('template', 'web.yaml.j2')) or C(lookup('file', ...))) or as a
        mapping (a variable of the playbook), as C(template_body) of
        M(amazon.aws.cloudformation) and C(template) of M(openstack.cloud.stack)
        with inline content.
      - It is read as a template file named C(template_body) in the playbook's
        directory would be; files it references (C(get_file), provider
        templates) are read relative to that directory, and errors name
        C(<playbook directory>/template_body), the place and what was expected.
      - Mutually exclusive with O(template).
    type: raw
    version_added: 1.0.0
  environment:
    description:
      - Paths to Heat environment files on the controller, applied in order; later
        files override earlier ones, as with C(openstack stack create -e).
      - Relative paths are looked up as for O(template).
      - C(hotplay.stacks.openstack) names the environment shipped in this collection
        that maps C(OS::Nova::Server), C(OS::Neutron::*) and C(OS::Cinder::*) types
        onto C(openstack.cloud) modules (see the collection's docs/openstack.md).
    type: list
    elements: path
    default: []
  file_roots:
    description:
      - Directories on the controller, besides the template's own directory tree,
        from which C(get_file) and provider templates may be read.
      - Without them, a reference that leaves the template's directory (with
        C(..), an absolute path or a symbolic link that points outside) fails
        validation, naming the file and the place of the reference; URLs are
        never read.
      - Provider templates named by an environment file's C(resource_registry)
        may also be read from that environment file's directory tree.
      - Relative paths are looked up as for O(template).
      - See C(docs/security.md) in the collection.
    type: list
    elements: path
    default: []
  parameters:
    description:
      - Values for the template's parameters. They override C(parameters) and
        C(parameter_defaults) from the environment files.
      - With O(existing=true), they are merged on top of the parameters the stack
        was last applied with.
    type: dict
    default: {}
  existing:
    description:
      - V(true) makes a PATCH update, as C(openstack stack update --existing) in
        Heat, which starts from the stack's stored definition rather than from files only.
      - The stored template is kept unless O(template) is given; the stored
        environment files are kept and those in O(environment) are applied on top
        of them; the parameters given when the stack was last applied are kept,
        less those in O(clear_parameters), and O(parameters) override them.
      - Values of C(hidden) parameters are kept in the store encrypted with the
        store key (O(store_key)), so they need not be given again. Only when the
        last revision was recorded before secrets were encrypted (it kept a digest)
        must a hidden parameter given before be given again in O(parameters), or
        named in O(clear_parameters); otherwise the task fails with the message
        C(hidden parameters of revisions recorded before secrets were encrypted
        are not kept in the store, ...) naming them.
      - When the stack does not exist, O(template) is required and the stack is
        created from it as with O(existing=false).
    type: bool
    default: false
  clear_parameters:
    description:
      - With O(existing=true), names of stored parameters to forget, so that they
        take their value from the environment files or the template's default
        again, as C(openstack stack update --clear-parameter).
      - Ignored when O(existing=false).
    type: list
    elements: str
    default: []
  nested_depth:
    description:
      - How many levels of nested stacks (for example C(OS::Heat::ResourceGroup)
        members or provider templates) to include in RV(resources) and RV(events).
      - V(0) reports only the top-level stack's resources and events.
      - A nested entry is named by its path from the top stack, such as
        C(group/0/server), and has a C(parent) key.
    type: int
    default: 0
  plan_id:
    description:
      - Apply only the plan that was reviewed. Pass the RV(plan_id) returned by a
        preview (a check mode run of this task with the same options).
      - The update goes ahead only when applying the same template, environment
        files and parameters to the stack as it is now gives the same plan id;
        when the stack or the definition changed since the preview, the task is
        refused (it fails and changes nothing) with a message that starts with
        C(The reviewed plan <id> is stale) and gives the current plan id.
      - Running the same task again after the reviewed plan was applied reports no
        change (the last revision applied that plan and nothing moved since).
      - With O(state=absent), the plan id of a check mode deletion; the stack is
        deleted only if it is still as it was previewed.
    type: str
  prevent_destroy:
    description:
      - Patterns (shell-style, as Python's C(fnmatch), case-sensitive) matched
        against the path of each resource (C(server), or C(group/0/server) inside
        nested stacks) and against its type (C(OS::Nova::*)).
      - When the plan deletes or replaces a resource that matches, the task fails
        before any change with a message that starts with C(Refusing to apply) and
        lists each such resource, its type, what would happen to it and why.
      - In-place updates of matching resources are allowed.
      - With O(state=absent), a matching resource refuses the deletion of the
        whole stack (an ad hoc deletion that does not give it is refused only by
        O(deletion_protection)).
    type: list
    elements: str
    default: []
  deletion_protection:
    description:
      - Protect the stack from deletion, a setting stored on the stack (as
        C(termination_protection) of M(amazon.aws.cloudformation)).
      - While it is set, a task with O(state=absent) is refused with
        C(changed=false) (also in check mode), the stack and its resources left as
        they are, unless that task gives O(deletion_protection=false), which lifts
        the protection and deletes the stack.
      - V(false) with O(state=present) lifts the protection (with
        O(existing=true), nothing else of the stack has to be given).
      - When not given, the stored value is kept (V(false) for a new stack).
        Changing only this setting reports C(changed=true) and records no revision.
      - Unlike O(prevent_destroy), which refuses deleting or replacing matching
        resources, it is kept with the stack, so an ad hoc playbook that deletes
        the stack is refused too.
    type: bool
    version_added: 1.0.0
  tags:
    description:
      - Heat's stack tags, stored on the stack and returned in RV(stack.tags) (and
        by M(hotplay.stacks.stack_info)).
      - Each tag is a text of 1 to 80 characters without a comma (Heat's API gives
        the tags as one comma-separated text).
      - When not given, the stored tags are kept (Heat keeps a stack's tags through
        an update that gives none); V([]) removes them. Changing only the tags
        reports C(changed=true) and records no revision.
    type: list
    elements: str
    version_added: 1.0.0
  parallelism:
    description:
      - At most this many resources of a stack are acted on (created, updated,
        replaced, deleted) at once, as C(-parallelism) of Terraform; lower it to
        stay within an API's rate limits.
      - The cap holds for each stack's walk; a nested stack being acted on walks
        its own resources with the same cap.
      - Applies to O(state=present) and O(state=absent), and to an automatic
        rollback (O(rollback_on_failure)).
    type: int
    default: 128
    version_added: 1.0.0
  return_resources:
    description:
      - Which resources the result lists in RV(resources), to keep results small
        on big stacks.
      - V(all) lists every resource (down to O(nested_depth)).
      - V(changed) lists only those this run acted on (named by its events) or,
        in check mode and on refusal, those the plan would act on; a run with
        nothing to do lists none.
      - V(none) lists none; M(hotplay.stacks.stack_info) still shows them.
    type: str
    choices: [all, changed, none]
    default: all
    version_added: 1.0.0
  events_limit:
    description:
      - Return at most this many of the run's events, the last ones (where a
        failure is), as C(events_limit) of M(amazon.aws.cloudformation); RV(events_omitted)
        says how many were left out. V(0) returns none.
      - When not given, every event of the run is returned.
      - The store keeps every event; M(hotplay.stacks.stack_info) shows them.
    type: int
    version_added: 1.0.0
  on_restricted:
    description:
      - What to do when the plan updates or replaces a resource whose
        C(restricted_actions) in the environment's C(resource_registry) forbid
        it (C(update) or C(replace)).
      - 'V(fail) refuses as Heat does, before any change, naming the first such
        resource in Heat''s words, for example C(UPDATE_FAILED: Resource UPDATE failed:
        ResourceActionRestricted: resources.database: replace is restricted for resource.)'
      - V(skip) leaves those resources as they are and applies the rest of the
        update. RV(plan) lists them as C(unchanged), with the reason saying which
        restricted change was left out; what reads them sees them unchanged.
    type: str
    choices: [fail, skip]
    default: fail
  timeout:
    description:
      - Time limit of the create, update or delete, in seconds (Heat's
        C(timeout_mins) is in minutes); V(0) means no limit.
      - When it is reached no further resource starts, resources in progress are
        aborted and marked C(<ACTION>_FAILED) with the reason
        "C(<ACTION>) aborted (Timed out)", resources that never started are
        recorded as C(INIT_COMPLETE), and the stack ends C(CREATE_FAILED) or
        C(UPDATE_FAILED) with the reason C(Timed out); the task fails.
      - Running the task again continues from there. Completed resources are kept,
        failed ones are replaced (nested stacks are converged again).
      - Whatever O(timeout) is, interrupting C(ansible-playbook) (SIGTERM, as an
        AWX job cancel sends, or SIGINT, Ctrl-C) stops a create, update or delete
        in the same way, with the reason C(Interrupted by SIGTERM) or
        C(Interrupted by SIGINT) recorded in the store.
    type: int
    default: 0
  rollback_on_failure:
    description:
      - What to do when a create or an update fails. V(false), Heat's default,
        leaves the stack C(CREATE_FAILED) or C(UPDATE_FAILED) as it is, to be
        fixed by applying again or rolled back later with
        M(hotplay.stacks.stack_rollback).
      - V(true) rolls back at once, as Heat's C(--enable-rollback) does. A failed
        create deletes every resource it made (those whose C(deletion_policy) is
        C(Retain) are only forgotten) and the stack, which stays recorded, ends
        C(ROLLBACK_COMPLETE). A failed update goes back to the last good revision
        (the latest revision older than the failed one that completed), recorded
        as a new C(ROLLBACK) revision, with the update's replaced resources
        swapped back in as M(hotplay.stacks.stack_rollback) does; the stack ends
        C(ROLLBACK_COMPLETE) or C(ROLLBACK_FAILED). The rollback is not subject to
        a C(max_age); the values of C(hidden) parameters are the target
        revision's, from the store.
      - A time-out (O(timeout)) stops the update, not the rollback that follows it.
      - 'With V(true), the task still fails, with the message "<FAILED status>: <reason>;
        automatic rollback: <status> (<reason>)", and returns RV(rollback).'
      - Ignored in check mode and with O(state=absent).
    type: bool
    default: false
  keep_replaced:
    description:
      - Seconds that a successful update keeps the resources it replaced (the
        physical resources and their records, retired) before deleting them, so
        that a later M(hotplay.stacks.stack_rollback) can swap them back in
        instead of creating them again.
      - V(0), the default, is Heat's behaviour; replaced resources are deleted at
        the end of the update that replaced them, once it has succeeded. A failed
        update keeps what it replaced whatever this option says, until the stack
        is rolled back or a later run succeeds.
      - Kept resources still exist, and may cost, while they are kept. They are
        deleted by the first successful update or rollback of the stack once their
        time is over (nothing deletes them in between), and by a deletion of the
        stack at any time; a check mode deletion lists them in RV(plan) as
        C(deleted), with the reason C(replaced in revision <n>, kept until now).
    type: int
    default: 0
  converge:
    description:
      - As Heat's C(openstack stack update --converge), check the real resources
        before the update, and put right what drifted, even when the template and
        parameters did not change.
      - Each resource that can tell (a C(Hotplay::Ansible::Module) resource, such
        as those of the shipped OpenStack environment) runs its module in check
        mode with its recorded arguments, as M(hotplay.stacks.stack_info) does with
        O(hotplay.stacks.stack_info#module:drift=true). One that would change is
        updated with the same properties, so its module runs again (a port deleted
        behind the stack's back is made again, a security group's rules are set
        back); the nested stacks that hold it are updated to reach it, and what
        reads it follows a new id. RV(plan) names these C(updated), with a reason
        that starts with C(converge).
      - V(false), the default, is Heat's default; the stored state is trusted.
      - Ignored with O(state=absent).
    type: bool
    default: false
  breakpoints:
    description:
      - Breakpoints for this run, on top of the hooks that the environment's
        C(resource_registry) sets in its C(resources) section.
      - The run pauses at each matching hook point (see C(docs/breakpoints.md)),
        that is C(pre-create) before a resource is created, C(post-create) after,
        while its stack is created (as in Heat, a resource an update adds is
        created without stopping); C(pre-update) and C(post-update) around an
        update in place or a replacement, and C(pre-update) also at a resource an
        update leaves as it is; C(pre-delete) and C(post-delete) around a
        deletion while its stack is deleted (O(state=absent)), not of a resource
        that an update removes.
      - The breakpoints are not part of the stack's definition. They are not
        recorded, do not count as a change, and the same task must give them
        again when it resumes a paused run. A run that no longer sets a pending
        C(pre-*) hook goes past it, yet the hook stays listed in
        RV(hooks_pending) until M(hotplay.stacks.stack_hook) clears it; a
        pending C(post-*) hook holds the run whatever the task sets.
    type: list
    elements: dict
    default: []
    suboptions:
      resource:
        description:
          - A shell-style pattern (Python's C(fnmatch), case-sensitive), matched
            against the resource's path from the top stack (C(group/0/server))
            and against its bare name (C(server)); either match sets the
            breakpoint. So V(server) also matches C(server) inside every nested
            stack, and C(*) matches C(/).
          - A member of an C(OS::Heat::ResourceGroup) is C(<group>/<index>),
            such as V(workers/1).
        type: str
        required: true
      hook:
        description: The hook points to pause at.
        type: list
        elements: str
        required: true
        choices: [pre-create, pre-update, pre-delete, post-create, post-update, post-delete]
  wait_for_hooks:
    description:
      - Seconds to wait when the run pauses at hooks. The task keeps the stack's
        lock, checks the store every second, and as soon as every pending hook
        has been cleared (by M(hotplay.stacks.stack_hook) in another task or job)
        it goes on with the run, in the same task; when it pauses again, it
        waits again, until the time is up.
      - When the time is up with hooks still pending, the task returns paused as
        without this option.
      - Stepping (O(hotplay.stacks.stack_hook#module:action=step)) switched on
        while the task waits applies to the rest of its run.
      - V(0) returns at once when the run pauses.
      - O(timeout) and an interruption (SIGTERM, SIGINT) end the waiting too;
        the task then returns paused.
      - Also with O(state=absent).
    type: int
    default: 0
  graph:
    description:
      - Also return the stack's dependency graph as RV(graph), each resource
        coloured by what the plan does to it (added, updated, replaced, deleted,
        unchanged). Resources of nested stacks are shown under their parent.
      - V(dot) is Graphviz source, V(mermaid) a Mermaid flowchart (rendered by
        GitLab, GitHub and many wikis), V(svg) an image made by Graphviz's C(dot)
        command, which must be installed on the controller (otherwise the task
        fails saying so).
      - With O(state=absent), the resources the deletion removes.
    type: str
    choices: [dot, mermaid, svg]
extends_documentation_fragment:
  - hotplay.stacks.store
  - hotplay.stacks.cloud
  - hotplay.stacks.lock
  - hotplay.stacks.attributes
  - hotplay.stacks.attributes.actiongroup_stacks
  - hotplay.stacks.attributes.controller
attributes:
  check_mode:
    support: full
    details:
      - Check mode is the update preview. It reports RV(plan) and RV(plan_id),
        warns for each resource the update would delete or replace, and writes
        nothing to the store.
      - With O(state=absent), RV(plan) lists every resource that would be deleted.
      - The refusals are checked in check mode too, so a preview fails where the
        apply would.
  diff_mode:
    support: full
    details:
      - One diff per resource that is added, updated, replaced or deleted, with its
        properties before and after. A value that is known only once the update
        runs (read from a resource that changes) is shown as
        "(known after apply)".
  idempotent:
    support: full
    details:
      - With O(plan_id), a second run after the plan was applied reports no change.
      - With O(on_restricted=skip), a second run reports no change although the
        skipped resources still differ from the definition.
      - A stack paused at breakpoints is not idempotent; each run of the same task
        continues it and reports C(changed=true), also when no hook was cleared in
        between and the run pauses where it was.
notes:
  - Resource types use Heat's names (C(OS::Heat::TestResource),
    C(OS::Heat::ResourceGroup), ...) with Heat's properties and attributes; types
    specific to this collection use the C(Hotplay::) prefix.
seealso:
  - module: hotplay.stacks.stack_rollback
  - module: hotplay.stacks.stack_adopt
  - module: hotplay.stacks.stack_resource
  - module: hotplay.stacks.stack_lock
  - module: hotplay.stacks.stack_info
  - module: hotplay.stacks.stack_hook
  - name: Heat Orchestration Template (HOT) specification
    description: The template format this module applies.
    link: https://docs.openstack.org/heat/latest/template_guide/hot_spec.html
requirements:
  - psycopg >= 3 (Python, on the controller), for a PostgreSQL O(store) only
  - cryptography (Python, on the controller), for a stack that keeps secrets (O(store_key))
  - openstacksdk (Python, on the controller), for O(cloud) and OpenStack resource types only
  - Graphviz C(dot) command (on the controller), for O(graph=svg) only
author:
  - hotplay.stacks maintainers (@hotplay-stacks)
"""

EXAMPLES = r"""
- name: Create or update a stack from a template, an environment and parameters
  hotplay.stacks.stack:
    name: web
    template: "{{ playbook_dir }}/templates/web_tier.yaml"
    environment:
      - "{{ playbook_dir }}/environments/production.yaml"
    parameters:
      server_count: 3
      flavor: m1.small
  register: web_stack

- name: Use an output of the stack
  ansible.builtin.debug:
    msg: "Stack {{ web_stack.stack_id }} is at revision {{ web_stack.revision }}: {{ web_stack.outputs }}"

- name: Apply a stack and report the members of its resource groups too
  hotplay.stacks.stack:
    name: workers
    template: "{{ playbook_dir }}/templates/workers.yaml"
    nested_depth: 2
  register: workers_stack

- name: Keep a stack's state in a chosen SQLite file for every stack task of a block
  module_defaults:
    group/hotplay.stacks.stacks:
      store: sqlite:////var/lib/hotplay/stacks.db
  block:
    - name: Apply the network stack
      hotplay.stacks.stack:
        name: network
        template: "{{ playbook_dir }}/templates/network.yaml"

    - name: Apply the database stack
      hotplay.stacks.stack:
        name: database
        template: "{{ playbook_dir }}/templates/database.yaml"

- name: Delete a stack (resources with deletion_policy Retain are kept)
  hotplay.stacks.stack:
    name: web
    state: absent

- name: Preview an update without changing anything
  hotplay.stacks.stack:
    name: web
    template: "{{ playbook_dir }}/templates/web_tier.yaml"
    parameters:
      server_count: 4
  check_mode: true
  register: web_preview

- name: Show what the update would do to each resource, and why
  ansible.builtin.debug:
    msg:
      - "replaced: {{ web_preview.plan.replaced }}"
      - "deleted: {{ web_preview.plan.deleted }}"
      - "{{ web_preview.plan.reasons }}"

# Review in one job, apply exactly the reviewed plan in the next one (for
# example two AWX job templates in a workflow, with an approval node between).
# First job: the preview, run in check mode; set_stats hands the plan id on.
- name: Preview the update
  hotplay.stacks.stack:
    name: web
    template: "{{ playbook_dir }}/templates/web_tier.yaml"
    parameters:
      server_count: 4
  check_mode: true
  register: web_preview

- name: Pass the plan id to the next job of the workflow
  ansible.builtin.set_stats:
    data:
      web_plan_id: "{{ web_preview.plan_id }}"

# Second job: the same task with the reviewed plan id; it is refused as stale
# when the stack or the definition changed since the preview.
- name: Apply the reviewed plan
  hotplay.stacks.stack:
    name: web
    template: "{{ playbook_dir }}/templates/web_tier.yaml"
    parameters:
      server_count: 4
    plan_id: "{{ web_plan_id }}"

- name: Change one parameter of a stack, keeping its template, environments and other parameters (PATCH)
  hotplay.stacks.stack:
    name: web
    existing: true
    parameters:
      flavor: m1.large
    store_key: "{{ vault_hotplay_store_key }}"  # opens the hidden values kept in the store

- name: Forget a parameter so that it takes its default again
  hotplay.stacks.stack:
    name: web
    existing: true
    clear_parameters:
      - flavor
    parameters:
      db_password: "{{ vault_db_password }}"

- name: Fail before any change if the update would delete or replace a database or a volume
  hotplay.stacks.stack:
    name: web
    template: "{{ playbook_dir }}/templates/web_tier.yaml"
    prevent_destroy:
      - database
      - "OS::Cinder::*"

- name: Leave resources whose update the environment restricts as they are, update the rest
  hotplay.stacks.stack:
    name: web
    template: "{{ playbook_dir }}/templates/web_tier.yaml"
    environment:
      - "{{ playbook_dir }}/environments/restricted.yaml"
    on_restricted: skip

- name: Give up after 10 minutes (run the task again to continue)
  hotplay.stacks.stack:
    name: web
    template: "{{ playbook_dir }}/templates/web_tier.yaml"
    timeout: 600

- name: Preview with a Mermaid graph of the changes, for a merge request
  hotplay.stacks.stack:
    name: web
    template: "{{ playbook_dir }}/templates/web_tier.yaml"
    graph: mermaid
  check_mode: true
  register: web_preview

- name: Create the web stack, pausing before the database is created
  hotplay.stacks.stack:
    name: web
    template: "{{ playbook_dir }}/templates/web_tier.yaml"
    breakpoints:
      - resource: database
        hook: [pre-create]
  register: web_stack

- name: Show where it stopped (the other branches are done)
  ansible.builtin.debug:
    msg: "{{ web_stack.stack_status }}: waiting at {{ web_stack.hooks_pending }}"

- name: Clear the breakpoint
  hotplay.stacks.stack_hook:
    name: web
    action: clear
    resource: database

- name: Resume with the same task
  hotplay.stacks.stack:
    name: web
    template: "{{ playbook_dir }}/templates/web_tier.yaml"
    breakpoints:
      - resource: database
        hook: [pre-create]

- name: Update, waiting up to an hour at the environment's hooks for someone to clear them
  hotplay.stacks.stack:
    name: web
    template: "{{ playbook_dir }}/templates/web_tier.yaml"
    environment:
      - "{{ playbook_dir }}/environments/hooks.yaml"
    wait_for_hooks: 3600

- name: Write the graph next to the playbook
  ansible.builtin.copy:
    content: "{{ web_preview.graph }}"
    dest: "{{ playbook_dir }}/web-plan.mmd"
    mode: "0644"
  delegate_to: localhost
  check_mode: false
"""

RETURN = r"""
stack:
  description:
    - The stack after the task, in the shape M(hotplay.stacks.stack_info) returns
      it (RV(hotplay.stacks.stack_info#module:stack)), without its resources,
      events and revisions.
    - The preferred names; RV(stack_id), RV(stack_status) and
      RV(stack_status_reason) are deprecated aliases of RV(stack.id),
      RV(stack.status) and RV(stack.status_reason).
  returned: when the stack exists or has just been deleted
  type: dict
  version_added: 1.0.0
  contains:
    id:
      description: Unique identifier of the stack, kept across updates.
      type: str
      returned: always
      sample: 8d6b5b1e-5c1f-4f7e-9a55-2f0b6d3c4a10
    name:
      description: Name of the stack.
      type: str
      returned: always
      sample: web
    status:
      description:
        - The stack's status in Heat's words, C(<ACTION>_<STATUS>), such as
          C(CREATE_COMPLETE), C(UPDATE_FAILED) or C(DELETE_COMPLETE).
      type: str
      returned: always
      sample: CREATE_COMPLETE
    status_reason:
      description: Why the stack is in its status, as Heat words it.
      type: str
      returned: always
      sample: Stack CREATE completed successfully
    created:
      description: When the stack was created, an ISO 8601 timestamp in UTC.
      type: str
      returned: always
      sample: "2026-01-01T12:00:00Z"
    updated:
      description: When the stack's status or settings last changed, an ISO 8601 timestamp in UTC.
      type: str
      returned: always
      sample: "2026-01-02T08:30:00Z"
    revision:
      description: Number of the stack's current revision (0 before the first is recorded).
      type: int
      returned: always
      sample: 4
    tags:
      description: Heat's stack tags (see O(hotplay.stacks.stack#module:tags)).
      type: list
      elements: str
      returned: always
      sample: [env=prod, team-web]
    deletion_protection:
      description: Whether a deletion of the stack is refused (see O(hotplay.stacks.stack#module:deletion_protection)).
      type: bool
      returned: always
      sample: false
stack_id:
  description:
    - Deprecated alias of RV(stack.id); it will be removed in release 2.0.0.
  returned: when the stack exists or has just been deleted
  type: str
  sample: 8d6b5b1e-5c1f-4f7e-9a55-2f0b6d3c4a10
stack_status:
  description:
    - Deprecated alias of RV(stack.status); it will be removed in release 2.0.0.
    - The stack's status in Heat's words, C(<ACTION>_<STATUS>), such as
      C(CREATE_COMPLETE), C(UPDATE_COMPLETE), C(UPDATE_FAILED) or C(DELETE_COMPLETE).
    - C(CREATE_IN_PROGRESS), C(UPDATE_IN_PROGRESS) or C(DELETE_IN_PROGRESS) when
      the run paused at breakpoints (see RV(hooks_pending)).
    - Not returned when the template, environment files or parameters failed
      validation.
  returned: when the stack exists or has just been deleted
  type: str
  sample: CREATE_COMPLETE
stack_status_reason:
  description:
    - Deprecated alias of RV(stack.status_reason); it will be removed in release 2.0.0.
    - Why the stack is in its status, as Heat words it.
  returned: when the stack exists or has just been deleted
  type: str
  sample: Stack CREATE completed successfully
outputs:
  description:
    - The template's outputs, name to value. Every output of the template is a key.
    - An output whose C(condition) is false, or that could not be resolved, has
      the value V(null); an unresolved one is also listed in RV(output_errors).
  returned: when the stack exists
  type: dict
  sample: {"url": "http://192.0.2.10/", "server_names": ["web-0", "web-1"]}
output_errors:
  description: Outputs that could not be resolved, output name to error message.
  returned: when the stack exists
  type: dict
  sample: {"admin_url": "The Referenced Attribute (lb admin_address) is incorrect."}
resources:
  description:
    - The stack's resources, with nested ones down to O(nested_depth), each
      nested one after its parent.
    - In check mode and when the update was refused, the resources as they are
      stored, before the update.
    - Empty when the task failed before the stack existed, and in check mode for
      a stack that does not exist yet.
    - Only those the run acted on with O(return_resources=changed); none with
      O(return_resources=none).
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description:
        - Name of the resource; for a nested resource, its path from the top stack.
      type: str
      returned: always
      sample: group/0/server
    type:
      description: Resource type.
      type: str
      returned: always
      sample: OS::Heat::TestResource
    status:
      description: The resource's status in Heat's words.
      type: str
      returned: always
      sample: CREATE_COMPLETE
    status_reason:
      description: Why the resource is in its status.
      type: str
      returned: always
      sample: state changed
    physical_id:
      description: Identifier of the real resource, empty before it is created.
      type: str
      returned: always
      sample: 3f1c2a64-1d0e-4a43-b1de-6a1f1c7e2b90
    parent:
      description: Path of the resource that owns the nested stack holding this one.
      type: str
      returned: for nested resources only
      sample: group/0
events:
  description:
    - The events produced by this task run, in the order they happened, with
      nested ones down to O(nested_depth).
    - Events about the stack itself use the stack's name as C(resource_name).
    - Empty when the task failed before the stack existed, in check mode, when
      nothing changed and when the update was refused.
    - At most O(events_limit) of them, the last ones.
  returned: always
  type: list
  elements: dict
  contains:
    resource_name:
      description: Name or nested path of the resource, or the stack's name.
      type: str
      returned: always
      sample: server
    parent:
      description: Path of the resource that owns the nested stack of this event.
      type: str
      returned: for events of nested resources only
      sample: group/0
    action:
      description: The action, such as C(CREATE), C(UPDATE), C(DELETE).
      type: str
      returned: always
      sample: CREATE
    status:
      description: C(IN_PROGRESS), C(COMPLETE) or C(FAILED).
      type: str
      returned: always
      sample: COMPLETE
    reason:
      description: Reason of the event.
      type: str
      returned: always
      sample: state changed
    physical_id:
      description:
        - Identifier of the real resource when the event happened; empty before
          it is created and for the stack's own events.
      type: str
      returned: always
      sample: 3f1c2a64-1d0e-4a43-b1de-6a1f1c7e2b90
    time:
      description: When the event happened, an ISO 8601 timestamp in UTC.
      type: str
      returned: always
      sample: "2026-01-01T12:00:00Z"
events_omitted:
  description: How many of the run's events O(events_limit) left out of RV(events).
  returned: when O(events_limit) left events out
  type: int
  sample: 1940
  version_added: 1.0.0
parameters:
  description:
    - The parameter values the stack was applied with, after defaults and
      environment files; values of C(hidden) parameters are shown as C(******).
    - In check mode and when the update was refused, the values the update would
      apply.
    - Empty when the task failed before the stack existed, and after a deletion.
  returned: always
  type: dict
  sample: {"server_count": 3, "flavor": "m1.small", "db_password": "******"}
revision:
  description:
    - Number of the stack's revision recorded by this run (or the current one when
      nothing changed, in check mode and when the update was refused).
  returned: when the stack exists
  type: int
  sample: 4
plan:
  description:
    - What the update does (in check mode, would do) to each resource, computed
      before anything is written. Each key is a list of resource paths in the
      order the plan visits them (dependency order, the resources of a nested
      stack right after its parent, removed resources last); resources of nested
      stacks are included at every depth, named by their path from the top stack
      (C(member/inner), C(group/2)), whatever O(nested_depth) is.
    - For a real run, the plan that was applied. A re-run with nothing to do lists
      every resource as C(unchanged).
    - With O(state=absent) in check mode, every resource of the stack under
      C(deleted).
    - A resource whose update O(on_restricted=skip) leaves alone is listed as
      C(unchanged), with the restricted change in its reason.
  returned: >-
    with O(state=present), when the template, environment files and parameters are
    valid (also when the update is refused); with O(state=absent), when the stack
    exists
  type: dict
  contains:
    added:
      description: Resources that will be created.
      type: list
      elements: str
      returned: always
      sample: [group/3]
    deleted:
      description:
        - Resources that will be deleted, because they were removed from the
          template (or a nested stack's definition) or their parent is deleted or
          replaced.
      type: list
      elements: str
      returned: always
      sample: [group/0]
    replaced:
      description:
        - Resources that will be replaced; the new one is created first, the old
          one deleted once the whole update has succeeded.
      type: list
      elements: str
      returned: always
      sample: [database]
    updated:
      description: Resources that will be updated in place, keeping their physical id.
      type: list
      elements: str
      returned: always
      sample: [config, app]
    unchanged:
      description:
        - Resources that will be left as they are.
        - Empty with O(return_resources=changed) or O(return_resources=none) (on a
          big stack, as long a list as RV(resources)).
      type: list
      elements: str
      returned: always
      sample: [network]
    reasons:
      description:
        - 'Why each resource that is not unchanged is listed, resource path to
          reason, such as C(new resource), C(properties changed: value),
          C(metadata changed), C(the resource is CREATE_FAILED) or
          C(removed from the template).'
        - A property read from a resource that itself changes is not known before
          the update runs; the reason names that resource.
      type: dict
      returned: always
      sample:
        database: property value changed and update_replace is true (value)
        config: "properties changed: value"
        app: "properties changed: value (reads database, which will be replaced)"
    checks:
      description:
        - In check mode, for each C(Hotplay::Ansible::Module) resource that would be
          added, updated or replaced (by path), what its module said when run in
          check mode with diff on its host. C(changed) is V(true) or V(false), or
          V(null) with C(msg) when the module cannot tell (no check mode, it
          failed, its host is unreachable, or its arguments are known only after
          apply); C(changed_keys) and C(diff) come from the module's diff.
        - A stack with no such resource to ask has no C(checks).
      type: dict
      returned: in check mode, when a module resource would change
      sample:
        config: {changed: true, changed_keys: [content], diff: [{before: "port=80\n", after: "port=8080\n"}]}
        service: {changed: null, msg: "remote module (ansible.builtin.service) does not support check mode"}
    refused:
      description:
        - In check mode, each change the apply would refuse, in plan order, with
          why; the preview does not fail, and each also gets a C(REFUSED:)
          warning. C(resource) is the resource's path, C(type) its type, C(action)
          the plan's word for the change (C(updated), C(replaced), C(deleted)).
        - A change the environment's C(restricted_actions) forbid (unless
          O(on_restricted=skip), which plans it as unchanged), and a deletion or
          replacement O(prevent_destroy) matches (a resource may be listed for
          both).
        - The apply fails at them as O(on_restricted) says, naming the first
          restricted one as Heat does, or every protected one.
      type: list
      elements: dict
      returned: in check mode, when the apply would refuse a change
      sample:
        - resource: database
          type: OS::Heat::TestResource
          action: replaced
          reason: >-
            prevent_destroy protects it (database), and property value changed and
            update_replace is true (value): the apply is refused
plan_id:
  description:
    - Identifies this plan, that is the stack as it is stored now together with the
      template, environment files and parameters given.
    - Pass it back as O(plan_id) to apply exactly the reviewed plan; the apply is
      refused as stale if the stack or the definition changed in between.
    - For a real run, the id of the plan that was applied; it does not match the
      stack any more once the run has changed it.
    - With O(state=absent), the id of the deletion plan.
  returned: when RV(plan) is returned
  type: str
  sample: 4c888923270314627d6b793bdd7d3342
graph:
  description:
    - The dependency graph in the format O(graph) asks for, each resource labelled
      with its path, type and plan action and coloured by the action (added green,
      updated yellow, replaced orange, deleted red, unchanged grey), its text black
      or white for WCAG AA contrast, with a legend of the colours, the arrow and the
      dashed line (shortened in the sample). An arrow goes from a resource to the
      one that needs it; resources of nested stacks hang off their parent with a
      dashed line.
  returned: when O(graph) is set and O(state=present)
  type: str
  sample: |
    flowchart LR
      n0["database<br/>OS::Heat::TestResource<br/>replaced"]:::replaced
      n1["app<br/>OS::Heat::Value<br/>updated"]:::updated
      n0 --> n1
      subgraph legend ["Legend. Colour: what this run does to the resource"]
        direction TB
        legend1["updated: changed in place"]:::updated
        legend2["replaced: a new one created, the old one deleted"]:::replaced
        legend_a["a"]:::legendtext -->|"b needs a: a is created first"| legend_b["b"]:::legendtext
      end
      classDef updated fill:#f9a825,color:#000000
      classDef replaced fill:#ef6c00,color:#000000
      classDef legendtext fill:none,stroke:none
hooks_pending:
  description:
    - The breakpoints (Heat's hooks) the stack is paused at, nested stacks
      included, after this task; empty when there are none.
    - When it is not empty, the stack is C(*_IN_PROGRESS) and the task did not
      fail. Resources behind a C(pre-*) hook keep their status (C(INIT_COMPLETE)
      for one not created yet), as do those that depend on them; the branches
      that do not depend on them have finished.
    - Clear them with M(hotplay.stacks.stack_hook), then run the same task again.
  returned: >-
    with O(state=present), when the template, environment files and parameters
    are valid (also in check mode and when the update is refused); with
    O(state=absent), when a deletion ran (not in check mode)
  type: list
  elements: dict
  contains:
    resource:
      description: Path of the resource from the top stack.
      type: str
      returned: always
      sample: group/1
    hook:
      description: The hook, such as C(pre-create) or C(post-update).
      type: str
      returned: always
      sample: pre-create
  sample:
    - resource: database
      hook: pre-create
rollback:
  description:
    - What the automatic rollback (O(rollback_on_failure=true)) did after the
      create or update failed.
  returned: when O(rollback_on_failure=true) and the create or update failed
  type: dict
  contains:
    target_revision:
      description:
        - The revision rolled back to; V(null) after a failed create (everything
          it made is deleted) and when there was nothing to roll back to.
      type: int
      returned: always
      sample: 3
    status:
      description: The stack's status after the rollback.
      type: str
      returned: always
      sample: ROLLBACK_COMPLETE
    status_reason:
      description:
        - Why the stack is in that status.
        - 'When the update could not be rolled back at all (no earlier revision
          completed, or a target recorded before secrets were encrypted had hidden
          values the task does not give), C(not rolled back: <why>), and the stack
          stays C(UPDATE_FAILED).'
      type: str
      returned: after a failed update
      sample: Stack ROLLBACK completed successfully
    restored:
      description: Paths of the replaced resources swapped back in.
      type: list
      elements: str
      returned: always
      sample: [database]
    recreated:
      description:
        - Resources whose replaced copy was found but failed its health check,
          path to why; a new one was created instead.
      type: dict
      returned: always
      sample: {}
    accepted_as_is:
      description: Always empty for an automatic rollback.
      type: list
      elements: str
      returned: always
      sample: []
    succeeded:
      description: Whether the rollback completed.
      type: bool
      returned: always
      sample: true
msg:
  description:
    - 'Why the task failed, such as a validation error, the stack''s failure
      (C(<STACK_STATUS>: <reason>)) or a refusal.'
    - A refused update (immutable parameter, restricted action, O(prevent_destroy),
      stale O(plan_id)) fails with C(changed=false) and writes nothing; the
      result still has RV(plan), RV(plan_id) and the stack's unchanged
      RV(stack.status).
  returned: on failure
  type: str
  sample: "The following parameters are immutable and may not be updated: region"
"""
