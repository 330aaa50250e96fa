"""SummaryWriter and FileWriter: what torch.utils.tensorboard.writer provides, writing through
the tensorboard package's EventFileWriter (so the event files are TensorBoard's own format)."""
import os
import socket
import sys
import time
from datetime import datetime

import numpy as np
from google.protobuf import text_format
from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.plugins.projector.projector_config_pb2 import EmbeddingInfo, ProjectorConfig
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from . import summary as _summary
from ._convert import make_np

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """Writes Event protos to one event file in `log_dir` (made if missing)."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        log_dir = str(log_dir)
        self.event_writer = EventFileWriter(log_dir, max_queue, flush_secs, filename_suffix)

    def get_logdir(self):
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None):
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)     # a float or a 0-d tensor step is truncated, as by torch
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None):
        self.add_event(Event(summary=summary), global_step, walltime)

    def add_graph(self, graph_profile, walltime=None):
        raise NotImplementedError(_NO_GRAPH)

    def add_onnx_graph(self, graph, walltime=None):
        raise NotImplementedError(_NO_GRAPH)

    def flush(self):
        self.event_writer.flush()

    def close(self):
        self.event_writer.close()

    def reopen(self):
        self.event_writer.reopen()


_NO_GRAPH = ("ember.utils.tensorboard does not write model graphs: ember has no JIT tracer "
             "(torch.jit.trace) to record one")


def _default_log_dir(comment):
    stamp = datetime.now().strftime("%b%d_%H-%M-%S")
    return os.path.join("runs", stamp + "_" + socket.gethostname() + comment)


def _figure_to_chw(figure, close):
    """The RGB pixels (CHW, uint8) of a matplotlib figure rendered by the Agg backend."""
    # optional, and only figures need it (as in torch)
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    width, height = figure.canvas.get_width_height()
    rgba = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8).reshape(height, width, 4)
    pyplot = sys.modules.get("matplotlib.pyplot")
    if close and pyplot is not None:    # (a figure made without pyplot is not registered in it)
        pyplot.close(figure)
    return rgba[:, :, :3].transpose(2, 0, 1)


def _tsv_name(tag):
    """A tag as one folder name: '/' and '\\' escaped, as torch names embedding folders."""
    return tag.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")


class SummaryWriter:
    """Logs scalars, histograms, images, text, hyperparameters, PR curves and embeddings to
    an event file in `log_dir` (default runs/<date>_<host><comment>) for TensorBoard."""

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=""):
        if not log_dir:
            log_dir = _default_log_dir(comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()
        self.default_bins = _summary.tensorflow_bins()

    def _get_file_writer(self):
        """The writer of the main event file, (re)opened after close()."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs,
                                          self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                # tells TensorBoard to drop the events at or after purge_step from a crashed run
                step = self.purge_step
                self.file_writer.add_event(Event(step=step, file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=step,
                                                 session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        return self.log_dir

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        self._get_file_writer().add_summary(
            _summary.scalar(tag, scalar_value, new_style=new_style,
                            double_precision=double_precision), global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Each value under `main_tag`, in an event file of its own folder
        <log_dir>/<main_tag>_<key> (slashes become underscores), so TensorBoard draws them on
        one chart."""
        walltime = time.time() if walltime is None else walltime
        root = self._get_file_writer().get_logdir()
        for key, value in tag_scalar_dict.items():
            folder = os.path.join(root, main_tag.replace("/", "_") + "_" + key)
            writer = self.all_writers.get(folder)
            if writer is None:
                writer = FileWriter(folder, self.max_queue, self.flush_secs, self.filename_suffix)
                self.all_writers[folder] = writer
            writer.add_summary(_summary.scalar(main_tag, value), global_step, walltime)

    def add_tensor(self, tag, tensor, global_step=None, walltime=None):
        self._get_file_writer().add_summary(_summary.tensor_proto(tag, tensor), global_step,
                                            walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None):
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._get_file_writer().add_summary(
            _summary.histogram(tag, values, bins, max_bins=max_bins), global_step, walltime)

    def add_histogram_raw(self, tag, min, max, num, sum, sum_squares, bucket_limits,  # noqa: A002
                          bucket_counts, global_step=None, walltime=None):
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        self._get_file_writer().add_summary(
            _summary.histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits,
                                   bucket_counts), global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        self._get_file_writer().add_summary(
            _summary.image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """A batch of images, tiled 8 to a row into one image."""
        self._get_file_writer().add_summary(
            _summary.image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        self._get_file_writer().add_summary(_summary.text(tag, text_string), global_step,
                                            walltime)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None,
                    global_step=None):
        """Hyperparameters and their metrics, in a run of their own: <log_dir>/<run_name>
        (default: the current time)."""
        if not isinstance(hparam_dict, dict) or not isinstance(metric_dict, dict):
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        summaries = _summary.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        run_name = str(time.time()) if not run_name else run_name
        folder = os.path.join(self._get_file_writer().get_logdir(), run_name)
        with SummaryWriter(log_dir=folder) as run:
            for s in summaries:
                run.file_writer.add_summary(s, global_step)
            for key, value in metric_dict.items():
                run.add_scalar(key, value, global_step)

    def add_pr_curve(self, tag, labels, predictions, global_step=None, num_thresholds=127,
                     weights=None, walltime=None):
        self._get_file_writer().add_summary(
            _summary.pr_curve(tag, labels, predictions, num_thresholds, weights), global_step,
            walltime)

    def add_pr_curve_raw(self, tag, true_positive_counts, false_positive_counts,
                         true_negative_counts, false_negative_counts, precision, recall,
                         global_step=None, num_thresholds=127, weights=None, walltime=None):
        self._get_file_writer().add_summary(
            _summary.pr_curve_raw(tag, true_positive_counts, false_positive_counts,
                                  true_negative_counts, false_negative_counts, precision, recall,
                                  num_thresholds, weights), global_step, walltime)

    def add_custom_scalars(self, layout):
        self._get_file_writer().add_summary(_summary.custom_scalars(layout))

    def add_custom_scalars_multilinechart(self, tags, category="default", title="untitled"):
        self.add_custom_scalars({category: {title: ["Multiline", tags]}})

    def add_custom_scalars_marginchart(self, tags, category="default", title="untitled"):
        assert len(tags) == 3
        self.add_custom_scalars({category: {title: ["Margin", tags]}})

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None, tag="default",
                      metadata_header=None):
        """Points for TensorBoard's projector: <log_dir>/<step:05>/<tag>/tensors.tsv (and
        metadata.tsv), listed in <log_dir>/projector_config.pbtxt."""
        mat = make_np(mat)
        step = 0 if global_step is None else global_step
        subdir = f"{str(step).zfill(5)}/{_tsv_name(tag)}"
        root = self._get_file_writer().get_logdir()
        folder = os.path.join(root, subdir)
        if os.path.exists(folder):
            # (torch logs it through its 'torch' logger, which writes plain messages to stderr)
            print("warning: Embedding dir exists, did you set global_step for add_embedding()?",
                  file=sys.stderr)
        else:
            os.makedirs(folder)
        entry = EmbeddingInfo(tensor_name=f"{tag}:{str(step).zfill(5)}")
        if metadata is not None:
            assert mat.shape[0] == len(metadata), "#labels should equal with #data points"
            if metadata_header is None:
                lines = [str(m) for m in metadata]
            else:
                assert len(metadata_header) == len(metadata[0]), \
                    "len of header must be equal to the number of columns in metadata"
                lines = ["\t".join(str(e) for e in row) for row in [metadata_header, *metadata]]
            with open(os.path.join(folder, "metadata.tsv"), "w") as f:
                f.writelines(line + "\n" for line in lines)
            entry.metadata_path = f"{subdir}/metadata.tsv"
        if label_img is not None:
            assert mat.shape[0] == label_img.shape[0], "#images should equal with #data points"
            _summary.write_sprite(label_img, folder)
            entry.sprite.image_path = f"{subdir}/sprite.png"
            entry.sprite.single_image_dim.extend([label_img.shape[3], label_img.shape[2]])
        assert mat.ndim == 2, "mat should be 2D, where mat.size(0) is the number of data points"
        with open(os.path.join(folder, "tensors.tsv"), "w") as f:
            f.writelines("\t".join(str(v) for v in row) + "\n" for row in mat.tolist())
        entry.tensor_path = f"{subdir}/tensors.tsv"
        if not hasattr(self, "_projector_config"):
            self._projector_config = ProjectorConfig()
        self._projector_config.embeddings.append(entry)
        with open(os.path.join(root, "projector_config.pbtxt"), "w") as f:
            f.write(text_format.MessageToString(self._projector_config))

    def add_audio(self, tag, snd_tensor, global_step=None, sample_rate=44100, walltime=None):
        """A mono clip of samples in [-1, 1] (cut to that range), as a 16-bit WAV."""
        self._get_file_writer().add_summary(
            _summary.audio(tag, snd_tensor, sample_rate=sample_rate), global_step, walltime)

    def add_mesh(self, tag, vertices, colors=None, faces=None, config_dict=None,
                 global_step=None, walltime=None):
        """A 3D point cloud or mesh (B x N x 3 vertices; faces and colors alike) for the mesh
        plugin; config_dict: its ThreeJS camera, lights and material settings."""
        self._get_file_writer().add_summary(
            _summary.mesh(tag, vertices, colors, faces, config_dict), global_step, walltime)

    def add_image_with_boxes(self, tag, img_tensor, box_tensor, global_step=None, walltime=None,
                             rescale=1, dataformats="CHW", labels=None):
        """An image with boxes (N x 4: left, top, right, bottom in pixels) drawn in red, each
        labelled when `labels` has one string per box (otherwise the labels are left out)."""
        if labels is not None:
            if isinstance(labels, str):
                labels = [labels]
            if len(labels) != box_tensor.shape[0]:
                labels = None
        self._get_file_writer().add_summary(
            _summary.image_boxes(tag, img_tensor, box_tensor, rescale=rescale,
                                 dataformats=dataformats, labels=labels), global_step, walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """A matplotlib figure drawn as an image (a list of figures: one image, side by side);
        closed afterwards unless close=False. Needs matplotlib, as in torch."""
        if isinstance(figure, list):
            images = np.stack([_figure_to_chw(f, close) for f in figure])
            self.add_images(tag, images, global_step, walltime, dataformats="NCHW")
        else:
            self.add_image(tag, _figure_to_chw(figure, close), global_step, walltime,
                           dataformats="CHW")

    def add_video(self, tag, vid_tensor, global_step=None, fps=4, walltime=None):
        self._get_file_writer().add_summary(_summary.video(tag, vid_tensor, fps), global_step,
                                            walltime)

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """Not provided: torch traces the model with torch.jit.trace, which ember lacks."""
        raise NotImplementedError(_NO_GRAPH)

    def add_onnx_graph(self, prototxt):
        raise NotImplementedError(_NO_GRAPH)

    def flush(self):
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self):
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()
