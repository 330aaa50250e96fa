"""Summary protos for each kind of TensorBoard data, built with the tensorboard package's own
protobuf classes exactly as torch.utils.tensorboard.summary builds them (checked field by
field against torch in tests/test_tensorboard.py)."""
import importlib.util
import io
import json
import math
import wave

import numpy as np
from google.protobuf import struct_pb2
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.custom_scalar import layout_pb2
from tensorboard.plugins.hparams import api_pb2 as hp_api
from tensorboard.plugins.mesh import metadata as mesh_metadata
from tensorboard.plugins.mesh.plugin_data_pb2 import MeshPluginData
from tensorboard.plugins.hparams.plugin_data_pb2 import (HParamsPluginData, SessionEndInfo,
                                                        SessionStartInfo)
from tensorboard.plugins.pr_curve.plugin_data_pb2 import PrCurvePluginData

from ..._tensor import Tensor
from ._convert import make_grid, make_np, to_hwc

__all__ = ["scalar", "histogram", "histogram_raw", "image", "image_boxes", "video", "audio", "text", "hparams", "pr_curve",
           "pr_curve_raw", "custom_scalars", "tensor_proto", "mesh"]

_PR_MAX_THRESHOLDS = 127     # TensorBoard's PR-curve plugin draws at most this many
_PR_MIN_COUNT = 1e-7         # keeps precision and recall finite where nothing is counted


def _plugin_metadata(name, content=b""):
    return SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name=name,
                                                                  content=content))


def _shape(*sizes):
    return TensorShapeProto(dim=[TensorShapeProto.Dim(size=s) for s in sizes])


def scalar(name, value, new_style=False, double_precision=False):
    """One number: a legacy `simple_value`, or with new_style a float (double) tensor for the
    scalars plugin."""
    array = make_np(value).squeeze()
    assert array.ndim == 0, (
        "Tensor should contain one element (0 dimensions)." + " " * 13
        + f"Was given size: {array.size} and {array.ndim} dimensions.")
    number = float(array)
    if not new_style:
        return Summary(value=[Summary.Value(tag=name, simple_value=number)])
    if double_precision:
        tensor = TensorProto(dtype="DT_DOUBLE", double_val=[number])
    else:
        tensor = TensorProto(dtype="DT_FLOAT", float_val=[number])
    return Summary(value=[Summary.Value(tag=name, tensor=tensor,
                                        metadata=_plugin_metadata("scalars"))])


def tensorflow_bins():
    """TensorBoard's default histogram edges: ±1e-12 growing by 10% to 1e20, and 0."""
    positive = []
    edge = 1e-12
    while edge < 1e20:
        positive.append(edge)
        edge *= 1.1
    return [-e for e in reversed(positive)] + [0.0] + positive


def histogram_raw(name, min, max, num, sum, sum_squares, bucket_limits,  # noqa: A002
                  bucket_counts):
    histo = HistogramProto(min=min, max=max, num=num, sum=sum, sum_squares=sum_squares,
                           bucket_limit=bucket_limits, bucket=bucket_counts)
    return Summary(value=[Summary.Value(tag=name, histo=histo)])


def histogram(name, values, bins, max_bins=None):
    """A histogram of `values` over `bins` (edges, a count, or a NumPy estimator name), merged
    down to at most `max_bins` buckets, with the empty buckets at both ends dropped (one empty
    bucket is kept in front, as TensorBoard draws each bucket from the previous limit)."""
    values = make_np(values).astype(float)
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        group = len(counts) // max_bins
        short = len(counts) % group
        if short:
            counts = np.pad(counts, (0, group - short))
        counts = counts.reshape(-1, group).sum(axis=-1)
        limits = np.concatenate([limits[:-1:group], limits[-1:]])
    nonzero = np.flatnonzero(counts)
    if nonzero.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    first, last = int(nonzero[0]), int(nonzero[-1])
    if first > 0:
        counts = counts[first - 1:last + 1]
    else:
        counts = np.concatenate([[0], counts[:last + 1]])
    limits = limits[first:last + 2]
    return histogram_raw(name, min=values.min(), max=values.max(), num=len(values),
                         sum=values.sum(), sum_squares=values.dot(values),
                         bucket_limits=limits.tolist(), bucket_counts=counts.tolist())


def image(tag, array, dataformats="CHW"):
    """A PNG of `array`: uint8 as it is, anything else read as [0, 1] and scaled to 0..255
    (cut to that range, truncated); colorspace is the channel count."""
    hwc = to_hwc(make_np(array), dataformats)
    pixels = _to_uint8(hwc, 1 if hwc.dtype == np.uint8 else 255)
    height, width, channels = pixels.shape
    picture = Summary.Image(height=height, width=width, colorspace=channels,
                            encoded_image_string=_png(pixels))
    return Summary(value=[Summary.Value(tag=tag, image=picture)])


def _png(pixels, rescale=1, boxes=None, labels=None):
    """PNG bytes of an HWC uint8 array, boxes (rows of left, top, right, bottom) drawn on it
    first, then scaled by `rescale`."""
    from PIL import Image, ImageDraw, ImageFont   # optional, as in torch: only images need it

    picture = Image.fromarray(pixels)
    if boxes is not None:
        _draw_boxes(ImageDraw.Draw(picture), ImageFont.load_default(), boxes, labels)
    if rescale != 1:
        width, height = picture.size
        picture = picture.resize((int(width * rescale), int(height * rescale)),
                                 Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    return buffer.getvalue()


def _draw_boxes(draw, font, boxes, labels):
    """Red 2-pixel outlines; a label in black on a red band above the box's bottom edge."""
    for i in range(boxes.shape[0]):
        left, top, right, bottom = (boxes[i, k] for k in range(4))
        draw.line([(left, top), (left, bottom), (right, bottom), (right, top), (left, top)],
                  width=2, fill="Red")
        if labels is None:
            continue
        x0, y0, x1, y1 = font.getbbox(labels[i])
        text_width, text_height = x1 - x0, y1 - y0
        margin = np.ceil(0.05 * text_height)
        draw.rectangle([(left, bottom - text_height - 2 * margin), (left + text_width, bottom)],
                       fill="Red")
        draw.text((left + margin, bottom - text_height - margin), labels[i], fill="black",
                  font=font)


def _to_uint8(array, scale):
    return (array.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)


def image_boxes(tag, array, boxes, rescale=1, dataformats="CHW", labels=None):
    """An image with boxes drawn on it (add_image_with_boxes); height and width are the
    image's before `rescale`, as torch records them."""
    hwc = to_hwc(make_np(array), dataformats)
    boxes = make_np(boxes)
    pixels = _to_uint8(hwc, 1 if hwc.dtype == np.uint8 else 255)
    height, width, channels = pixels.shape
    encoded = _png(pixels, rescale, boxes, labels)
    picture = Summary.Image(height=height, width=width, colorspace=channels,
                            encoded_image_string=encoded)
    return Summary(value=[Summary.Value(tag=tag, image=picture)])


def video(tag, array, fps=4):
    """A video (B x T x C x H x W) needs moviepy to become a GIF. Without moviepy torch says so
    and logs the tag with no picture: so does this. With moviepy: not written yet."""
    frames = make_np(array)
    _batch, _time, _channels, _height, _width = frames.shape   # the shape torch requires
    if importlib.util.find_spec("moviepy") is None:
        print("add_video needs package moviepy")
        return Summary(value=[Summary.Value(tag=tag)])
    raise NotImplementedError("add_video (GIF encoding with moviepy) is not provided by "
                              "ember.utils.tensorboard")


def write_sprite(label_img, folder):
    """The embedding projector's sprite.png: the images tiled ceil(sqrt(N)) to a row, on a
    black square as wide as the tiling (every dtype read as [0, 1])."""
    count = label_img.size(0)       # a tensor, as in torch (a NumPy array fails here there too)
    images = make_np(label_img)
    grid = make_grid(images, ncols=math.ceil(math.sqrt(count))).transpose(1, 2, 0)
    square = np.zeros((grid.shape[1], grid.shape[1], 3))
    square[:grid.shape[0], :, :] = grid
    with open(f"{folder}/sprite.png", "wb") as f:
        f.write(_png(_to_uint8(square, 255)))


def audio(tag, samples, sample_rate=44100):
    array = make_np(samples).squeeze()
    if abs(array).max() > 1:
        print("warning: audio amplitude out of range, auto clipped.")
        array = array.clip(-1, 1)
    assert array.ndim == 1, "input tensor should be 1 dimensional."
    pcm = (array * np.iinfo(np.int16).max).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(sample_rate)
        wav.writeframes(pcm.tobytes())
    clip = Summary.Audio(sample_rate=sample_rate, num_channels=1, length_frames=array.shape[-1],
                         encoded_audio_string=buffer.getvalue(), content_type="audio/wav")
    return Summary(value=[Summary.Value(tag=tag, audio=clip)])


def text(tag, text):
    tensor = TensorProto(dtype="DT_STRING", string_val=[text.encode("utf_8")],
                         tensor_shape=_shape(1))
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", tensor=tensor,
                                        metadata=_plugin_metadata("text"))])


def tensor_proto(tag, tensor):
    """Any float tensor, for the generic "tensor" plugin (add_tensor)."""
    array = make_np(tensor)
    proto = TensorProto(dtype="DT_FLOAT", float_val=array.reshape(-1).tolist(),
                        tensor_shape=_shape(*array.shape))
    return Summary(value=[Summary.Value(tag=tag, tensor=proto,
                                        metadata=_plugin_metadata("tensor"))])


def _hparams_summary(tag, content):
    return Summary(value=[Summary.Value(tag=tag, metadata=_plugin_metadata(
        "hparams", content.SerializeToString()))])


def hparams(hparam_dict, metric_dict, hparam_domain_discrete=None):
    """The three hparams-plugin summaries (experiment, session start, session end)."""
    if not isinstance(hparam_dict, dict) or not isinstance(metric_dict, dict):
        raise TypeError("hparam_dict and metric_dict should be dictionary.")
    domains = {} if hparam_domain_discrete is None else hparam_domain_discrete
    if not isinstance(domains, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for key, choices in domains.items():
        if (key not in hparam_dict or not isinstance(choices, list)
                or not all(isinstance(c, type(hparam_dict[key])) for c in choices)):
            raise TypeError(f"parameter: hparam_domain_discrete[{key}] should be a list of "
                            f"same type as hparam_dict[{key}].")
    start = SessionStartInfo()
    infos = []
    for key, value in hparam_dict.items():
        if value is None:
            continue
        if isinstance(value, (int, float)):      # bool too: logged as a number, as by torch
            start.hparams[key].number_value = value
            kind, field = "DATA_TYPE_FLOAT64", "number_value"
        elif isinstance(value, str):
            start.hparams[key].string_value = value
            kind, field = "DATA_TYPE_STRING", "string_value"
        elif isinstance(value, Tensor):
            start.hparams[key].number_value = make_np(value)[0]
            infos.append(hp_api.HParamInfo(name=key, type=hp_api.DataType.Value(
                "DATA_TYPE_FLOAT64")))
            continue
        else:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        domain = None
        if key in domains:
            domain = struct_pb2.ListValue(values=[struct_pb2.Value(**{field: c})
                                                  for c in domains[key]])
        infos.append(hp_api.HParamInfo(name=key, type=hp_api.DataType.Value(kind),
                                       domain_discrete=domain))
    metrics = [hp_api.MetricInfo(name=hp_api.MetricName(tag=k)) for k in metric_dict]
    experiment = hp_api.Experiment(hparam_infos=infos, metric_infos=metrics)
    end = SessionEndInfo(status=hp_api.Status.Value("STATUS_SUCCESS"))
    return (_hparams_summary("_hparams_/experiment",
                             HParamsPluginData(experiment=experiment, version=0)),
            _hparams_summary("_hparams_/session_start_info",
                             HParamsPluginData(session_start_info=start, version=0)),
            _hparams_summary("_hparams_/session_end_info",
                             HParamsPluginData(session_end_info=end, version=0)))


def _pr_summary(tag, rows, num_thresholds):
    data = np.stack(rows).astype(np.float32)
    proto = TensorProto(dtype="DT_FLOAT", float_val=data.reshape(-1).tolist(),
                        tensor_shape=_shape(*data.shape))
    content = PrCurvePluginData(version=0, num_thresholds=num_thresholds).SerializeToString()
    return Summary(value=[Summary.Value(tag=tag, tensor=proto,
                                        metadata=_plugin_metadata("pr_curves", content))])


def pr_curve(tag, labels, predictions, num_thresholds=127, weights=None):
    """Counts of true/false positives/negatives, precision and recall at `num_thresholds`
    (at most 127) evenly spaced thresholds on predictions in [0, 1]."""
    num_thresholds = min(num_thresholds, _PR_MAX_THRESHOLDS)
    labels, predictions = make_np(labels), make_np(predictions)
    if weights is None:
        weights = 1.0
    buckets = np.floor(predictions * (num_thresholds - 1)).astype(np.int32)
    positive = labels.astype(np.float64)
    span = (0, num_thresholds - 1)
    tp_buckets, _ = np.histogram(buckets, bins=num_thresholds, range=span,
                                 weights=positive * weights)
    fp_buckets, _ = np.histogram(buckets, bins=num_thresholds, range=span,
                                 weights=(1.0 - positive) * weights)
    # a prediction counts as positive at every threshold up to its own bucket
    tp = np.cumsum(tp_buckets[::-1])[::-1]
    fp = np.cumsum(fp_buckets[::-1])[::-1]
    tn = fp[0] - fp
    fn = tp[0] - tp
    precision = tp / np.maximum(_PR_MIN_COUNT, tp + fp)
    recall = tp / np.maximum(_PR_MIN_COUNT, tp + fn)
    return _pr_summary(tag, (tp, fp, tn, fn, precision, recall), num_thresholds)


def pr_curve_raw(tag, tp, fp, tn, fn, precision, recall, num_thresholds=127, weights=None):
    num_thresholds = min(num_thresholds, _PR_MAX_THRESHOLDS)
    rows = [make_np(r) if isinstance(r, Tensor) else np.asarray(r)   # lists are fine here
            for r in (tp, fp, tn, fn, precision, recall)]
    return _pr_summary(tag, rows, num_thresholds)


def custom_scalars(layout):
    """The custom-scalars plugin's layout: {category: {chart title: ['Multiline', [tags]] or
    ['Margin', [value, lower, upper]]}}."""
    categories = []
    for category, charts in layout.items():
        entries = []
        for title, (kind, tags) in charts.items():
            if kind == "Multiline":
                entries.append(layout_pb2.Chart(
                    title=title, multiline=layout_pb2.MultilineChartContent(tag=tags)))
            else:
                series = [layout_pb2.MarginChartContent.Series(value=tags[0], lower=tags[1],
                                                               upper=tags[2])]
                entries.append(layout_pb2.Chart(
                    title=title, margin=layout_pb2.MarginChartContent(series=series)))
        categories.append(layout_pb2.Category(title=category, chart=entries))
    content = layout_pb2.Layout(category=categories)
    tensor = TensorProto(dtype="DT_STRING", string_val=[content.SerializeToString()],
                         tensor_shape=TensorShapeProto())
    return Summary(value=[Summary.Value(tag="custom_scalars__config__", tensor=tensor,
                                        metadata=_plugin_metadata("custom_scalars"))])


def mesh(tag, vertices, colors=None, faces=None, config_dict=None):
    """The mesh plugin's three parts (vertices, faces, colors: each B x N x 3) as float
    tensors, each labelled with which parts the mesh has."""
    parts = [(vertices, MeshPluginData.VERTEX), (faces, MeshPluginData.FACE),
             (colors, MeshPluginData.COLOR)]
    parts = [(data, kind) for data, kind in parts if data is not None]
    components = mesh_metadata.get_components_bitmask([kind for _, kind in parts])
    config = json.dumps(config_dict or {}, sort_keys=True)
    values = []
    for given, kind in parts:
        data = make_np(given)
        # the shape as given (a tensor's Size) goes into the bad-shape message, as in torch
        metadata = mesh_metadata.create_summary_metadata(
            tag, None, kind, components, given.shape, json_config=config)
        proto = TensorProto(dtype="DT_FLOAT", float_val=data.reshape(-1).tolist(),
                            tensor_shape=_shape(*data.shape))
        values.append(Summary.Value(tag=mesh_metadata.get_instance_name(tag, kind),
                                    tensor=proto, metadata=metadata))
    return Summary(value=values)
