"""The TF Serving config files in serving/ parse as the protos TF Serving reads them into."""

import os

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, text_format
from google.protobuf import wrappers_pb2

SERVING_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "serving")


def test_model_config_file_is_a_model_server_config():
    from tensorflow_serving.config import model_server_config_pb2 as config_pb2  # the test extra installs it
    with open(os.path.join(SERVING_DIR, "models.config")) as f:
        config = text_format.Parse(f.read(), config_pb2.ModelServerConfig())
    (model,) = config.model_config_list.config
    assert (model.name, model.base_path, model.model_platform) == ("zoo", "/models/zoo", "tensorflow")
    assert model.model_version_policy.latest.num_versions == 1


def _batching_parameters_class():
    """tensorflow.serving.BatchingParameters (session_bundle_config.proto), which the
    tensorflow-serving-api wheel does not ship: the same fields, built here."""
    wrappers = descriptor_pb2.FileDescriptorProto()
    wrappers_pb2.DESCRIPTOR.CopyToProto(wrappers)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(wrappers)
    file = descriptor_pb2.FileDescriptorProto(
        name="batching_parameters_test.proto", package="test", dependency=[wrappers.name], syntax="proto3"
    )
    message = file.message_type.add(name="BatchingParameters")
    label = descriptor_pb2.FieldDescriptorProto
    fields = [
        ("max_batch_size", ".google.protobuf.Int64Value"),
        ("batch_timeout_micros", ".google.protobuf.Int64Value"),
        ("max_enqueued_batches", ".google.protobuf.Int64Value"),
        ("num_batch_threads", ".google.protobuf.Int64Value"),
        ("thread_pool_name", ".google.protobuf.StringValue"),
    ]
    for number, (name, type_name) in enumerate(fields, start=1):
        message.field.add(name=name, number=number, type=label.TYPE_MESSAGE, type_name=type_name, label=label.LABEL_OPTIONAL)
    message.field.add(name="allowed_batch_sizes", number=6, type=label.TYPE_INT64, label=label.LABEL_REPEATED)
    message.field.add(name="pad_variable_length_inputs", number=7, type=label.TYPE_BOOL, label=label.LABEL_OPTIONAL)
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("test.BatchingParameters"))


def test_batching_parameters_file_parses_and_pads_nothing():
    with open(os.path.join(SERVING_DIR, "batching_parameters.txt")) as f:
        params = text_format.Parse(f.read(), _batching_parameters_class()())
    assert params.max_batch_size.value == 64 and params.batch_timeout_micros.value == 2000
    assert params.num_batch_threads.value >= 1 and params.max_enqueued_batches.value >= 1
    assert params.pad_variable_length_inputs is False
