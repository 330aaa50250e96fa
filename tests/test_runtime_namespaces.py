"""torch's runtime namespaces under `import ember as torch`: jit, profiler, the backend and
distributed stubs, compiler, multiprocessing, storages, and utils.data's StackDataset and
DistributedSampler. Differential against torch (CPU-only machine answers)."""
import os
import re
import warnings

import numpy as np
import pytest
import torch

import ember
from differential import same, catch, warnings_of


# ----------------------------------------------------------------------------- jit
def _mlp(T):
    T.manual_seed(0)
    return T.nn.Sequential(T.nn.Linear(3, 4), T.nn.ReLU(), T.nn.Linear(4, 2))


def test_script_and_trace_run_the_model():
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    model_e, model_t = _mlp(ember), _mlp(torch)
    model_e.load_state_dict({k: ember.tensor(v.numpy()) for k, v in model_t.state_dict().items()})
    for T, model in ((torch, model_t), (ember, model_e)):
        xs = T.tensor(x)
        scripted = T.jit.script(model)
        traced = T.jit.trace(model, xs)
        traced_fn = T.jit.trace(lambda a: a * 2, (xs,))
        out = (scripted(xs), traced(xs), traced_fn(xs),
               T.jit.trace(model, xs, check_trace=False)(xs))
        if T is torch:
            expected = out
        else:
            for a, b in zip(out, expected):
                np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5,
                                           atol=1e-6)
    assert ember.jit.script(model_e) is model_e      # (ember's documented behaviour)



def test_trace_errors():
    def f(x, y):
        return x + y

    def scenario(T):
        x = T.ones(2)
        return [catch(T.jit.trace, lambda a: a * 2),
                catch(T.jit.trace, lambda a: a * 2, 5),
                catch(T.jit.trace, lambda a: a, 3.0),
                catch(T.jit.trace, 3, (x,)),
                catch(lambda: T.jit.trace(f, x) and None),
                catch(lambda: T.jit.trace(f, (x, x, x)) and None),
                catch(T.jit.trace, lambda a: None, x),
                catch(T.jit.trace, lambda a: (a, 3), x),
                catch(T.jit.trace, lambda a: "s", x),
                catch(T.jit.trace, lambda a: {"a": a}, x),
                catch(T.jit.trace_module, T.nn.Linear(2, 2), (T.ones(1, 2),))]
    same(scenario)


def test_is_tracing_during_trace_only():
    def scenario(T):
        seen = []
        f = T.jit.trace(lambda a: (seen.append(T.jit.is_tracing()), a)[1], T.ones(1),
                        check_trace=False)
        return seen[:1], T.jit.is_tracing(), T.jit.is_scripting(), f(T.ones(1))
    same(scenario)


def test_script_errors_and_deprecation_warnings():
    def scenario(T):
        return [catch(T.jit.script, "s"), catch(T.jit.script, None), catch(T.jit.script, 3.5),
                catch(T.jit.script, (1,)),
                warnings_of(lambda: T.jit.script(T.nn.Linear(2, 2)) and None),
                warnings_of(lambda: T.jit.freeze(T.jit.script(T.nn.Linear(2, 2)).eval())
                            and None)[1][-1:],
                warnings_of(lambda: T.jit.fork(lambda: 1).wait()),
                warnings_of(lambda: T.jit.trace(lambda a: a, T.ones(1)) and None)[1][:1],
                warnings_of(lambda: catch(T.jit.load, "/nonexistent/m.pt"))]
    same(scenario)


def test_decorators_and_helpers():
    def scenario(T):
        @T.jit.ignore
        def a(x):
            return x + 1

        @T.jit.unused
        def b(x):
            return x + 2

        @T.jit.export
        def c(x):
            return x + 3

        result, caught = warnings_of(lambda: T.jit.ignore(drop=True)(lambda x: x * 5)(2))
        fut = T.jit.fork(lambda p, q=1: p + q, 1, q=5)
        attr = T.jit.Attribute(3, int)
        return [a(1), b(1), c(1), result, caught, T.jit.wait(fut), fut.done(), fut.value(),
                T.jit.annotate(int, 7), T.jit.annotate(T.Tensor, T.ones(1)),
                (attr.value, attr.type is int), repr(attr), T.jit.Final is not None,
                T.jit.set_fusion_strategy([("STATIC", 1)]),
                isinstance(T.jit.script(T.nn.Linear(2, 2)), T.nn.Module)]
    same(scenario)


def test_freeze_and_optimize_for_inference():
    def scenario(T):
        m = T.jit.script(T.nn.Linear(2, 2))
        trained = catch(T.jit.freeze, m)
        frozen = T.jit.freeze(m.eval())
        x = T.ones(1, 2)
        return [trained, catch(T.jit.freeze, 3), catch(T.jit.optimize_for_inference, 3),
                T.equal(frozen(x), m(x)),
                T.equal(T.jit.optimize_for_inference(T.jit.script(m))(x), m(x))]
    same(scenario)


def test_save_and_load_name_ember_save(tmp_path):
    def scenario(T):
        return [catch(T.jit.load, str(tmp_path / "missing.pt")),
                catch(T.jit.load, str(tmp_path))]
    same(scenario)
    with pytest.raises(RuntimeError, match=r"ember\.save"):
        ember.jit.save(ember.jit.script(ember.nn.Linear(2, 2)), str(tmp_path / "m.pt"))
    path = tmp_path / "m.pt"
    ember.save(ember.nn.Linear(2, 2).state_dict(), str(path))
    with pytest.raises(RuntimeError, match=r"ember\.load"):
        ember.jit.load(str(path))


def test_script_module_classes_for_isinstance():
    def scenario(T):
        m, f = T.nn.Linear(2, 2), (lambda x: x)
        return [issubclass(T.jit.ScriptModule, T.nn.Module),
                isinstance(m, T.jit.ScriptModule), isinstance(f, T.jit.ScriptFunction),
                issubclass(T.jit.RecursiveScriptModule, T.jit.ScriptModule)]
    same(scenario)


# ----------------------------------------------------------------------------- profiler
def _profiled(T, **options):
    a, b = T.ones(3, 3), T.ones(3, 3)
    P = T.profiler
    with P.profile(activities=[P.ProfilerActivity.CPU], **options) as prof:
        with P.record_function("model_inference"):
            c = a + b
            d = T.mm(c, b)
            d.relu()
            a.add_(1)
            (a * 2).sum()
    return prof


_RUN = {"model_inference", "aten::add", "aten::mm", "aten::relu", "aten::add_", "aten::mul",
        "aten::sum"}


@pytest.mark.parametrize("options", [{}, {"record_shapes": True}, {"profile_memory": True},
                                     {"with_stack": True}])
def test_profiler_records_the_ops_run(options):
    def scenario(T):
        prof = _profiled(T, **options)
        names = {e.key for e in prof.key_averages()}
        counts = {e.key: e.count for e in prof.key_averages() if e.key in _RUN}
        return sorted(_RUN & names), counts
    result = same(scenario)
    assert result[0] == sorted(_RUN)


@pytest.mark.parametrize("options,group", [({}, False), ({"profile_memory": True}, False),
                                           ({"record_shapes": True}, True)])
def test_profiler_table_layout(options, group):
    def scenario(T):
        prof = _profiled(T, **options)
        table = prof.key_averages(group_by_input_shape=group).table(
            sort_by="cpu_time_total", row_limit=3)
        lines = table.split("\n")
        # the rules and headers depend on the longest name and shapes: compare the columns
        # after the name (and before the shapes)
        start = len(lines[0].split("  ")[0])
        stop = lines[1].index("# of Calls") + len("# of Calls  ")
        head = [line[start:stop] for line in lines[:3]]
        widths = [len(cell) for cell in lines[0].split("  ")[1:-2 if group else -1]]
        rows = lines[3:-3]
        return head, widths, len(rows), lines[-3] == lines[0], \
            re.sub(r"[\d.]+(us|ms|s)$", "T", lines[-2]), lines[-1], \
            [re.fullmatch(r" *[\w:*#_]+ +[\d.]+% +[\d.]+m?u?s +[\d.]+% .*", r) is not None
             for r in rows]
    same(scenario)


def test_profiler_table_name_column_and_options():
    def scenario(T):
        with T.profiler.profile() as prof:
            for n in (2, 51, 52, 60):
                with T.profiler.record_function("n" * n):
                    pass
        events = prof.key_averages()
        table = events.table(row_limit=-1)
        lines = table.split("\n")
        return [[line.split("  ")[0] for line in lines[:-2]],
                [len(line) for line in lines[:3]],
                len(events.table(row_limit=0).split("\n")),
                catch(events.table, sort_by="bogus"),
                str(events) == events.table()]
    same(scenario)


def test_empty_profile_and_memory_formats():
    def scenario(T):
        with T.profiler.profile() as prof:
            pass
        P = T.autograd.profiler
        with P.profile(profile_memory=True) as legacy:
            T.ones(1000) * 2
        return [prof.key_averages().table(), prof.events().table(),
                {e.key for e in legacy.key_averages()} >= {"aten::mul"},
                legacy.key_averages().table().split("\n")[1].split()[-6:]]
    same(scenario)


def test_record_function_as_decorator_and_nesting():
    def scenario(T):
        @T.profiler.record_function("outer")
        def step(x):
            with T.autograd.profiler.record_function("inner"):
                return T.mm(x, x)
        x = T.ones(2, 2)
        step(x)     # outside a profiler: nothing recorded, nothing fails
        with T.profiler.profile() as prof:
            step(x)
            step(x)
        averages = {e.key: e for e in prof.key_averages()}
        events = prof.events()
        outer = [e for e in events if e.name == "outer"][0]
        return [averages["outer"].count, averages["inner"].count, averages["aten::mm"].count,
                averages["outer"].cpu_time_total >= averages["inner"].cpu_time_total,
                [c.name for c in outer.cpu_children],
                outer.self_cpu_time_total <= outer.cpu_time_total]
    same(scenario)


def test_profiler_schedule_and_steps():
    def scenario(T):
        P = T.profiler
        s = P.schedule(wait=1, warmup=1, active=2, repeat=1)
        ready = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with P.profile(schedule=P.schedule(wait=1, warmup=1, active=2, repeat=2),
                           on_trace_ready=lambda p: ready.append(
                               sorted((e.key, e.count) for e in p.key_averages()
                                      if e.key in ("ProfilerStep*", "aten::mul")))) as prof:
                for i in range(10):
                    T.ones(2) * i
                    prof.step()
        return [[a.name for a in map(s, range(6))], ready, prof.step_num,
                [str(P.ProfilerActivity.CPU), P.ProfilerActivity.CUDA.name]]
    same(scenario)


def test_tensorboard_trace_handler_is_a_clear_error():
    with pytest.raises(NotImplementedError, match="export_chrome_trace"):
        ember.profiler.tensorboard_trace_handler("/tmp/tb")


def test_chrome_trace_export(tmp_path):
    import json
    prof = _profiled(ember)
    prof.export_chrome_trace(str(tmp_path / "t.json"))
    names = {e["name"] for e in json.load(open(tmp_path / "t.json"))["traceEvents"]}
    assert _RUN <= names


def test_profiling_off_after_exit():
    from ember.ops import registry
    _profiled(ember)
    assert not registry._profiling
    assert registry.Op.__call__ is registry._untimed[0]


# ----------------------------------------------------------------------------- stubs
def test_backend_stubs():
    def scenario(T):
        return [T.mps.is_available(), T.mps.device_count(), catch(T.mps.synchronize),
                catch(T.mps.empty_cache), T.mps.manual_seed(0),
                T.xpu.is_available(), T.xpu.device_count(), T.xpu.is_initialized(),
                catch(T.xpu.current_device), catch(T.xpu.synchronize),
                T.accelerator.is_available(), T.accelerator.current_accelerator(),
                T.accelerator.device_count(), catch(T.accelerator.current_device_index),
                catch(T.accelerator.synchronize)]
    same(scenario)


def test_distributed_stub():
    def scenario(T):
        dist = T.distributed
        return [dist.is_available(), dist.is_initialized(), dist.is_nccl_available(),
                dist.is_torchelastic_launched(), catch(dist.get_rank),
                catch(dist.get_world_size), catch(dist.all_reduce, T.ones(2)),
                catch(dist.barrier), catch(dist.destroy_process_group),
                dist.group.WORLD]
    same(scenario)
    # init_process_group itself runs on MPI now: tests/test_distributed*.py cover it


def test_compiler_stub():
    def scenario(T):
        C = T.compiler

        @C.disable
        def f(x):
            return x * 2

        @C.disable(recursive=False)
        def g(x):
            return x + 1

        with C.set_stance("force_eager"):
            inside = f(3)
        return [C.is_compiling(), C.is_dynamo_compiling(), C.is_exporting(), f(3), g(3),
                inside, catch(C.disable, 3), catch(C.allow_in_graph, 3),
                C.allow_in_graph(f)(2), C.assume_constant_result(f)(2),
                catch(C.assume_constant_result, 3), C.reset()]
    same(scenario)


def _child(i, q):
    q.put(i * 10)


def _failing_child(i):
    raise ValueError(f"boom {i}")


def _exiting_child(i):
    os._exit(3)


def test_multiprocessing():
    def scenario(T):
        mp = T.multiprocessing
        q = mp.get_context("fork").SimpleQueue()
        started = mp.start_processes(_child, args=(q,), nprocs=2, start_method="fork")
        values = sorted([q.get(), q.get()])
        raised = catch(mp.start_processes, _failing_child, nprocs=1, start_method="fork")
        raised = raised[:2] + (raised[2].splitlines()[:2] + raised[2].splitlines()[-1:],)
        exited = catch(mp.start_processes, _exiting_child, nprocs=1, start_method="fork")
        context = mp.start_processes(_child, args=(q,), nprocs=1, join=False,
                                     start_method="fork")
        return [started, values, raised, exited, context.join(), q.get(),
                mp.cpu_count() == os.cpu_count(), mp.get_sharing_strategy(),
                sorted(mp.get_all_sharing_strategies()), callable(mp.spawn),
                mp.Queue is not None, mp.Process.__name__]
    same(scenario)


def test_storages():
    def scenario(T):
        t = T.ones(2)
        return [isinstance(t.untyped_storage(), T.UntypedStorage),
                T.is_storage(t.untyped_storage()), T.is_storage(t),
                issubclass(T.FloatStorage, T.TypedStorage), T.FloatStorage.dtype,
                T.LongStorage.dtype, T.BoolStorage.dtype,
                isinstance(t.untyped_storage(), T.TypedStorage)]
    same(scenario)


# ----------------------------------------------------------------------------- utils.data
def test_stack_dataset():
    def scenario(T):
        D = T.utils.data
        a, b = T.arange(4), T.arange(4) * 10
        tup, named = D.StackDataset(a, b), D.StackDataset(x=a, y=b)
        loader = D.DataLoader(named, batch_size=2)
        return [tup[1], len(tup), named[2], tup.__getitems__([3, 0]),
                named.__getitems__([1]), list(loader),
                catch(D.StackDataset), catch(D.StackDataset, a, T.arange(3)),
                catch(D.StackDataset, a, x=b), catch(D.StackDataset, x=a, y=T.arange(2))]
    same(scenario)


def test_distributed_sampler():
    def scenario(T):
        D = T.utils.data
        data = list(range(10))
        out = []
        for drop_last in (False, True):
            for rank in range(3):
                s = D.DistributedSampler(data, num_replicas=3, rank=rank, shuffle=False,
                                         drop_last=drop_last)
                out.append((list(s), len(s), s.num_samples, s.total_size))
        small = D.DistributedSampler(list(range(2)), num_replicas=5, rank=4, shuffle=False)
        out.append(list(small))
        out += [catch(D.DistributedSampler, data), catch(D.DistributedSampler, data, 2),
                catch(D.DistributedSampler, data, rank=0),
                catch(D.DistributedSampler, data, num_replicas=3, rank=3),
                catch(D.DistributedSampler, data, num_replicas=3, rank=-1)]
        return out
    same(scenario)


def test_distributed_sampler_shuffle_partitions_and_is_seeded():
    # (ember's random numbers are not torch's: the properties, not the order)
    D = ember.utils.data
    data = list(range(11))
    shares = [list(D.DistributedSampler(data, num_replicas=3, rank=r, seed=1)) for r in range(3)]
    every = sum(shares, [])
    assert set(every) == set(data) and len(every) == 12 and [len(x) for x in shares] == [4] * 3
    again = D.DistributedSampler(data, num_replicas=3, rank=0, seed=1)
    assert list(again) == shares[0]             # the same seed and epoch: the same order
    again.set_epoch(1)
    assert list(again) != shares[0]


def test_random_split_fractions():
    def scenario(T):
        D = T.utils.data
        parts = D.random_split(range(10), [0.3, 0.7], generator=T.Generator().manual_seed(0))
        return [[len(p) for p in parts],
                [len(p) for p in D.random_split(range(10), [0.33, 0.33, 0.34])],
                catch(D.random_split, range(10), [0.5, 0.6])]
    same(scenario)


def test_version_module():
    v = ember.version
    assert (v.cuda, v.hip, v.debug) == (torch.version.cuda, torch.version.hip,
                                        torch.version.debug)
    assert isinstance(v.git_version, str) and v.__version__ == ember.__version__
    assert type(v.__version__).__name__ == "TorchVersion"
    for T in (torch.torch_version.TorchVersion, ember.torch_version.TorchVersion):
        assert [T("2.10.0") > "2.9", T("2.1.0+cpu") >= (2, 1), T("2.1") == "2.1.0",
                T("1.13") < "2.0", T("2.0.0") <= (2,)] == [True, True, True, True, True]


def test_the_package_version_is_a_torch_version():
    def scenario(T):
        v = T.__version__
        return type(v).__name__, v >= (0, 1), v > "0.0.9", str(v) == v
    same(scenario)
