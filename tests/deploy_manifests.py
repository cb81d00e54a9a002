#!/usr/bin/env python3
"""Checks the Kubernetes manifests in a folder without a cluster.

    deploy_manifests.py DIR REPO

No schema of the Kubernetes API is on this machine, and `kubectl apply
--dry-run=client` needs a server, so the check is in two parts:
  1. Structure and agreement (always; python3-yaml): known apiVersion/kind,
     required fields, a complete list of fields for the objects kubectl
     cannot decode offline, workload selectors that match their pods,
     mounts of defined volumes, claims of defined PVCs, Service and
     NetworkPolicy selectors that find their pods; the programs' flags
     against their usage text in REPO; the agent's --collector naming the
     Service; the training example's hostPath, MERIDIAN_AGENT_SOCKET and
     runAsGroup agreeing with the DaemonSet's hostPath, --socket and
     --allow-group; TLS and tokens (docs/security.md): a collector that
     listens beyond loopback has --tls-cert, --tls-key and --auth-tokens
     (or --insecure), agents speak TLS, present a certificate and send a
     token where the collector asks for them, every such file is in a
     volume mounted in the container and readable by its user, and a token
     file has no group or other permission (a Secret's mode, fsGroup, or an
     emptyDir that an init container fills with a 0600 copy).
  2. Field names and types (where kubectl is installed): `kubectl set
     ... --local` decodes a workload or Service into kubectl's own Go types
     with no server; a wrong type fails, and an unknown field (a typo) is
     silently dropped, so every field of the input must still be there in
     kubectl's output.
Prints each problem and exits 1 if there is any.
"""
import json
import os
import re
import shutil
import subprocess
import sys

try:
    import yaml
except ImportError:
    sys.exit("deploy_manifests: python3-yaml is missing "
             "(deploy/dependencies.sh installs it)")

KINDS = {
    ("v1", "Namespace"), ("v1", "PersistentVolumeClaim"), ("v1", "Service"),
    ("apps/v1", "Deployment"), ("apps/v1", "DaemonSet"),
    ("batch/v1", "Job"), ("networking.k8s.io/v1", "NetworkPolicy"),
}
WORKLOADS = {"Deployment", "DaemonSet", "Job"}
# Every field of the objects kubectl cannot decode offline.
FIELDS = {
    "metadata": {"name", "namespace", "labels", "annotations",
                 "generateName", "finalizers", "ownerReferences"},
    "PersistentVolumeClaim.spec": {
        "accessModes", "dataSource", "dataSourceRef", "resources",
        "selector", "storageClassName", "volumeAttributesClassName",
        "volumeMode", "volumeName"},
    "NetworkPolicy.spec": {"podSelector", "policyTypes", "ingress", "egress"},
    "NetworkPolicy.rule": {"from", "to", "ports"},
    "NetworkPolicy.peer": {"podSelector", "namespaceSelector", "ipBlock"},
    "NetworkPolicy.port": {"port", "endPort", "protocol"},
}
NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
PROGRAMS = {"meridian-agent": "agent/agent_usage.cc",
            "meridian-collector": "collector/collector_usage.cc"}

problems = []


def problem(where, text):
    problems.append(f"{where}: {text}")


def unknown(where, mapping, allowed):
    for key in sorted(set(mapping or {}) - allowed):
        problem(where, f"unknown field {key!r}")


def labels_match(selector, labels):
    return bool(selector) and all(labels.get(k) == v
                                  for k, v in selector.items())


def usage_flags(repo, program):
    with open(os.path.join(repo, PROGRAMS[program])) as source:
        return set(re.findall(r"--[a-z][a-z-]*", source.read()))


def arg_value(args, flag):
    return args[args.index(flag) + 1] if flag in args[:-1] else None


def check_object(where, doc):
    kind = doc.get("kind")
    if (doc.get("apiVersion"), kind) not in KINDS:
        problem(where, f"unexpected apiVersion/kind "
                f"{doc.get('apiVersion')}/{kind}")
        return
    meta = doc.get("metadata") or {}
    unknown(where + " metadata", meta, FIELDS["metadata"])
    if not NAME.match(str(meta.get("name", ""))):
        problem(where, f"metadata.name {meta.get('name')!r} is not a DNS name")
    spec = doc.get("spec")
    if kind != "Namespace" and not isinstance(spec, dict):
        problem(where, "no spec")
        return
    if kind == "PersistentVolumeClaim":
        unknown(where + " spec", spec, FIELDS[kind + ".spec"])
        if not spec.get("accessModes") or \
                "storage" not in spec.get("resources", {}).get("requests", {}):
            problem(where, "a PVC needs accessModes and a storage request")
    elif kind == "NetworkPolicy":
        unknown(where + " spec", spec, FIELDS[kind + ".spec"])
        for rule in spec.get("ingress", []) + spec.get("egress", []):
            unknown(where + " rule", rule, FIELDS[kind + ".rule"])
            for peer in rule.get("from", []) + rule.get("to", []):
                unknown(where + " peer", peer, FIELDS[kind + ".peer"])
            for port in rule.get("ports", []):
                unknown(where + " port", port, FIELDS[kind + ".port"])
    elif kind == "Service":
        if not spec.get("ports"):
            problem(where, "a Service needs ports")
    elif kind in WORKLOADS:
        check_workload(where, doc)


def pod_of(doc):
    return ((doc.get("spec") or {}).get("template") or {})


def containers(doc):
    spec = pod_of(doc).get("spec") or {}
    return spec.get("initContainers", []) + spec.get("containers", [])


def check_workload(where, doc):
    template = pod_of(doc)
    labels = (template.get("metadata") or {}).get("labels") or {}
    selector = (doc["spec"].get("selector") or {}).get("matchLabels")
    if doc["kind"] != "Job" and not labels_match(selector, labels):
        problem(where, "spec.selector does not match the pod's labels")
    pod = template.get("spec") or {}
    if not pod.get("containers"):
        problem(where, "no containers")
    volumes = {v.get("name") for v in pod.get("volumes", [])}
    mounted = set()
    for c in containers(doc):
        at = f"{where} container {c.get('name')}"
        for key in ("name", "image"):
            if not c.get(key):
                problem(at, f"no {key}")
        for m in c.get("volumeMounts", []):
            if not m.get("name") or not m.get("mountPath"):
                problem(at, "a volumeMount needs name and mountPath")
            elif m["name"] not in volumes:
                problem(at, f"mounts {m['name']!r}, which is not a volume")
            mounted.add(m.get("name"))
    for name in sorted(volumes - mounted):
        problem(where, f"volume {name!r} is mounted by no container")


def check_programs(where, doc, repo):
    for c in containers(doc):
        program = os.path.basename((c.get("command") or [""])[0])
        if program not in PROGRAMS:
            continue
        known = usage_flags(repo, program)
        for arg in c.get("args", []):
            if str(arg).startswith("--") and arg not in known:
                problem(where, f"{program} has no flag {arg} "
                        f"(see {PROGRAMS[program]})")


def mounts(doc, container):
    volumes = {v["name"]: v for v in pod_of(doc)["spec"].get("volumes", [])}
    return [(m, volumes.get(m.get("name"), {}))
            for m in container.get("volumeMounts", [])]


def host_dir_of(doc, container, path):
    """The hostPath that holds `path` in the container, or None."""
    for m, volume in mounts(doc, container):
        mount = m.get("mountPath", "").rstrip("/")
        if "hostPath" in volume and os.path.dirname(path) == mount:
            return volume["hostPath"].get("path")
    return None


def check_agreement(objects, repo):
    by_kind = {}
    for where, doc in objects:
        by_kind.setdefault(doc.get("kind"), []).append((where, doc))
    names = {(d.get("kind"), d["metadata"].get("name")) for _, d in objects}
    pods = [(w, d) for w, d in objects if d.get("kind") in WORKLOADS]
    for where, doc in pods:
        check_programs(where, doc, repo)
        for v in pod_of(doc)["spec"].get("volumes", []):
            claim = (v.get("persistentVolumeClaim") or {}).get("claimName")
            if claim and ("PersistentVolumeClaim", claim) not in names:
                problem(where, f"claims {claim!r}, which is not defined here")
    for kind in ("Service", "NetworkPolicy"):
        for where, doc in by_kind.get(kind, []):
            spec = doc["spec"]
            selector = spec.get("selector") if kind == "Service" else \
                (spec.get("podSelector") or {}).get("matchLabels")
            found = [d for _, d in pods if labels_match(
                selector, pod_of(d)["metadata"].get("labels", {}))]
            if not found:
                problem(where, "its selector matches no pod defined here")
            for rule in spec.get("ingress", []):
                for peer in rule.get("from", []):
                    peer_labels = (peer.get("podSelector") or {}).get(
                        "matchLabels")
                    if peer_labels and not any(labels_match(
                            peer_labels, pod_of(d)["metadata"].get(
                                "labels", {})) for _, d in pods):
                        problem(where, "an ingress peer matches no pod here")
            if kind == "Service":
                ports = {p.get("name") for d in found
                         for c in containers(d) for p in c.get("ports", [])}
                for p in spec.get("ports", []):
                    target = p.get("targetPort", p.get("port"))
                    if isinstance(target, str) and target not in ports:
                        problem(where, f"targetPort {target!r} is no "
                                "container port of its pods")

    services = {f"{d['metadata']['name']}.{d['metadata'].get('namespace')}"
                f".svc:{p.get('port')}"
                for _, d in by_kind.get("Service", []) for p in d["spec"]["ports"]}
    agents = [(w, d, c) for w, d in by_kind.get("DaemonSet", [])
              for c in containers(d)
              if (c.get("command") or [""])[0].endswith("meridian-agent")]
    for where, doc, agent in agents:
        args = [str(a) for a in agent.get("args", [])]
        collector = arg_value(args, "--collector")
        if services and collector not in services:
            problem(where, f"--collector {collector} is none of the Services "
                    f"defined here ({', '.join(sorted(services))})")
        socket = arg_value(args, "--socket")
        host_dir = host_dir_of(doc, agent, socket or "")
        if not host_dir:
            problem(where, f"the socket {socket} is not in a hostPath volume")
        group = arg_value(args, "--allow-group")
        # The training pods: those that set MERIDIAN_AGENT_SOCKET.
        for pwhere, pdoc in pods:
            for c in containers(pdoc):
                env = {e.get("name"): e.get("value") for e in c.get("env", [])}
                if "MERIDIAN_AGENT_SOCKET" not in env:
                    continue
                path = env["MERIDIAN_AGENT_SOCKET"]
                at = f"{pwhere} container {c.get('name')}"
                if os.path.basename(path) != os.path.basename(socket or ""):
                    problem(at, f"MERIDIAN_AGENT_SOCKET {path} does not name "
                            f"the agent's socket {socket}")
                if host_dir_of(pdoc, c, path) != host_dir:
                    problem(at, f"MERIDIAN_AGENT_SOCKET {path} is not in a "
                            f"mount of the agent's host directory {host_dir}")
                context = {**(pod_of(pdoc)["spec"].get("securityContext") or
                              {}), **(c.get("securityContext") or {})}
                if group and context.get("runAsUser") != 0 and \
                        str(context.get("runAsGroup")) != group:
                    problem(at, f"runs as group {context.get('runAsGroup')}, "
                            f"which the agent (--allow-group {group}) refuses")


def loopback(listen):
    """Whether the collector counts HOST:PORT as loopback (collector.cc)."""
    host = listen[:listen.rfind(":")]
    if len(host) >= 2 and host[0] == "[" and host[-1] == "]":
        host = host[1:-1]
    return host in ("localhost", "::1") or host.startswith("127.") or \
        listen.startswith("unix:")


def run_as(doc, container):
    """The user a container runs as (None: the image's)."""
    context = {**(pod_of(doc)["spec"].get("securityContext") or {}),
               **(container.get("securityContext") or {})}
    return context.get("runAsUser")


def volume_of(doc, container, path):
    """The mount holding `path` in the container (the deepest) and its
    volume, or (None, None)."""
    found = (None, None)
    for m, volume in mounts(doc, container):
        mount = m.get("mountPath", "").rstrip("/")
        if path.startswith(mount + "/") and (
                found[0] is None or
                len(mount) > len(found[0]["mountPath"].rstrip("/"))):
            found = (m, volume)
    return found


def secret_file_mode(where, doc, m, volume, path):
    """The mode of `path` in a Secret or ConfigMap volume (the kubelet's:
    the item's mode, else defaultMode, else 0644; fsGroup adds group read),
    or None where the key is not projected. Such files are root's."""
    source = volume.get("secret") or volume.get("configMap") or {}
    key = path[len(m["mountPath"].rstrip("/")) + 1:]
    mode = source.get("defaultMode", 0o644)
    items = source.get("items")
    if items is not None:
        item = [i for i in items if i.get("path") == key]
        if not item:
            problem(where, f"{path}: {key!r} is not among the items of volume "
                    f"{m['name']!r}")
            return None
        mode = item[0].get("mode", mode)
    if (pod_of(doc)["spec"].get("securityContext") or {}).get("fsGroup") \
            is not None:
        mode |= 0o440
    return mode


def check_file(where, doc, container, path, what, private=False):
    """A file the program reads at start: in a mounted volume, readable by
    the container's user and, if `private`, with no group or other
    permission (the token files: collector/authorizer.cc,
    net/client_channel.cc)."""
    at = f"{where} container {container.get('name')}"
    m, volume = volume_of(doc, container, path)
    if m is None:
        problem(at, f"{what} {path} is in no volume mounted there")
        return
    uid = run_as(doc, container)
    if "secret" in volume or "configMap" in volume:
        if private and "configMap" in volume:
            problem(at, f"{what} {path} is in a ConfigMap: keep it in a Secret")
        mode = secret_file_mode(at, doc, m, volume, path)
        if mode is None:
            return
        fs_group = (pod_of(doc)["spec"].get("securityContext") or {}).get(
            "fsGroup")
        readable = uid in (None, 0) or mode & 0o004 or (
            fs_group is not None and mode & 0o040)
        if private and mode & 0o077:
            problem(at, f"{what} {path} will have mode {mode:04o}: it is "
                    "refused with any group or other permission (a Secret's "
                    "defaultMode, and fsGroup adds group read; see "
                    "docs/deploy.md)")
        elif not readable:
            problem(at, f"{what} {path} is root's, mode {mode:04o}: user "
                    f"{uid} cannot read it")
    elif "emptyDir" in volume and private:
        # Filled by an init container that mounts it writable and makes
        # the file 0600, as the container's user.
        key = path[len(m["mountPath"].rstrip("/")) + 1:]
        filled = False
        for init in pod_of(doc)["spec"].get("initContainers", []):
            for mm in init.get("volumeMounts", []):
                if mm.get("name") != m["name"] or mm.get("readOnly"):
                    continue
                target = mm.get("mountPath", "").rstrip("/") + "/" + key
                words = [str(w) for w in
                         init.get("command", []) + init.get("args", [])]
                if target in words and any(w in ("0600", "600", "u=rw")
                                           for w in words) and \
                        run_as(doc, init) == uid:
                    filled = True
        if not filled:
            problem(at, f"{what} {path} is in emptyDir {m['name']!r}, which "
                    "no init container of the same user fills with a 0600 "
                    "file")


def check_security(objects):
    pods = [(w, d) for w, d in objects if d.get("kind") in WORKLOADS]

    def running(program):
        return [(w, d, c) for w, d in pods for c in containers(d)
                if os.path.basename((c.get("command") or [""])[0]) == program]

    tls = mutual = tokens = False
    collectors = running("meridian-collector")
    for where, doc, c in collectors:
        args = [str(a) for a in c.get("args", [])]
        listen = arg_value(args, "--listen") or "127.0.0.1:7070"
        cert, key = arg_value(args, "--tls-cert"), arg_value(args, "--tls-key")
        ca, auth = arg_value(args, "--tls-ca"), arg_value(args, "--auth-tokens")
        if not loopback(listen) and "--insecure" not in args and \
                not (cert and key and auth):
            problem(where, f"meridian-collector listens on {listen} without "
                    "--tls-cert, --tls-key and --auth-tokens (or --insecure): "
                    "it refuses to start (docs/security.md)")
        if bool(cert) != bool(key):
            problem(where, "meridian-collector needs both --tls-cert and "
                    "--tls-key, or neither")
        if ca and not cert:
            problem(where, "meridian-collector --tls-ca needs --tls-cert")
        for flag, path in (("--tls-cert", cert), ("--tls-key", key),
                           ("--tls-ca", ca)):
            if path:
                check_file(where, doc, c, path, flag)
        if auth:
            check_file(where, doc, c, auth, "--auth-tokens", private=True)
        tls, mutual, tokens = tls or bool(cert), mutual or bool(ca), \
            tokens or bool(auth)

    for where, doc, c in running("meridian-agent"):
        args = [str(a) for a in c.get("args", [])]
        env = {e.get("name"): e.get("value") for e in c.get("env", [])}
        ca = arg_value(args, "--tls-ca") or env.get("MERIDIAN_TLS_CA")
        cert = arg_value(args, "--tls-cert") or env.get("MERIDIAN_TLS_CERT")
        key = arg_value(args, "--tls-key") or env.get("MERIDIAN_TLS_KEY")
        token_file = arg_value(args, "--token-file") or \
            env.get("MERIDIAN_TOKEN_FILE")
        token = token_file or "MERIDIAN_TOKEN" in env
        if bool(cert) != bool(key):
            problem(where, "the agent needs both a certificate and its key "
                    "(MERIDIAN_TLS_CERT, MERIDIAN_TLS_KEY), or neither")
        if collectors and tls and not ca:
            problem(where, "the collector serves TLS, but the agent has no "
                    "MERIDIAN_TLS_CA (or --tls-ca): it would not connect")
        if collectors and ca and not tls:
            problem(where, "the agent speaks TLS (MERIDIAN_TLS_CA) to a "
                    "collector that serves none")
        if collectors and mutual and not cert:
            problem(where, "the collector asks for client certificates "
                    "(--tls-ca), but the agent has none (MERIDIAN_TLS_CERT, "
                    "MERIDIAN_TLS_KEY)")
        if collectors and tokens and not token:
            problem(where, "the collector asks for tokens (--auth-tokens), but "
                    "the agent has none (MERIDIAN_TOKEN_FILE)")
        for what, path in (("MERIDIAN_TLS_CA", ca), ("MERIDIAN_TLS_CERT", cert),
                           ("MERIDIAN_TLS_KEY", key)):
            if path:
                check_file(where, doc, c, path, what)
        if token_file:
            check_file(where, doc, c, token_file, "the token file",
                       private=True)


def paths(value, prefix=()):
    """Every key path of a parsed document (list items by index)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield prefix + (key,)
            yield from paths(item, prefix + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from paths(item, prefix + (i,))


def has_path(value, path):
    for step in path:
        try:
            value = value[step]
        except (KeyError, IndexError, TypeError):
            return False
    return True


def kubectl_round_trip(where, doc):
    kind = doc.get("kind")
    if kind in WORKLOADS:
        command = ["set", "env", "MERIDIAN_MANIFEST_CHECK=1"]
    elif kind == "Service":
        selector = doc["spec"].get("selector") or {"x": "y"}
        command = ["set", "selector",
                   ",".join(f"{k}={v}" for k, v in selector.items())]
    else:
        return
    run = subprocess.run(
        ["kubectl", *command, "--local", "-f", "-", "-o", "json"],
        input=json.dumps(doc), capture_output=True, text=True, timeout=60)
    if run.returncode != 0:
        problem(where, "kubectl cannot decode it: " + run.stderr.strip())
        return
    decoded = json.loads(run.stdout)
    for path in paths(doc):
        if not has_path(decoded, path):
            problem(where, "unknown field " + ".".join(map(str, path)))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    folder, repo = sys.argv[1], sys.argv[2]
    objects = []
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".yaml"):
            continue
        try:
            with open(os.path.join(folder, name)) as f:
                docs = [d for d in yaml.safe_load_all(f) if d is not None]
        except yaml.YAMLError as e:
            problem(name, f"not YAML: {e}")
            continue
        for i, doc in enumerate(docs):
            where = f"{name}[{i}] {doc.get('kind')}"
            check_object(where, doc)
            objects.append((where, doc))
    if not objects:
        problem(folder, "no manifests")
    if not problems:
        check_agreement(objects, repo)
        check_security(objects)
    kubectl = shutil.which("kubectl")
    if kubectl and not problems:
        for where, doc in objects:
            kubectl_round_trip(where, doc)
    elif not kubectl:
        print("deploy_manifests: no kubectl here: field names and types "
              "were not checked")
    for line in problems:
        print("  " + line)
    print(f"deploy_manifests: {len(objects)} objects, "
          f"{len(problems)} problems")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
