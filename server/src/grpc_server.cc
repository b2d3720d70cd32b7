#include "grpc_server.h"

#include <grpcpp/grpcpp.h>

#include <cstring>
#include <future>
#include <limits>

#include "datatype.h"
#include "grpc_service.grpc.pb.h"

namespace baton::serve {

namespace {

grpc::Status to_grpc(const Status& s) {
  switch (s.code) {
    case Code::kOk: return grpc::Status::OK;
    case Code::kInvalidArgument: return {grpc::StatusCode::INVALID_ARGUMENT, s.message};
    case Code::kNotFound: return {grpc::StatusCode::NOT_FOUND, s.message};
    case Code::kTooLarge: return {grpc::StatusCode::RESOURCE_EXHAUSTED, s.message};
    case Code::kUnavailable: return {grpc::StatusCode::UNAVAILABLE, s.message};
    case Code::kDeadlineExceeded: return {grpc::StatusCode::DEADLINE_EXCEEDED, s.message};
    case Code::kInternal: return {grpc::StatusCode::INTERNAL, s.message};
  }
  return {grpc::StatusCode::INTERNAL, s.message};
}

Code from_grpc(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return Code::kOk;
    case grpc::StatusCode::INVALID_ARGUMENT: return Code::kInvalidArgument;
    case grpc::StatusCode::NOT_FOUND: return Code::kNotFound;
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return Code::kTooLarge;
    case grpc::StatusCode::UNAVAILABLE: return Code::kUnavailable;
    case grpc::StatusCode::DEADLINE_EXCEEDED: return Code::kDeadlineExceeded;
    default: return Code::kInternal;
  }
}

Status invalid(std::string message) { return Status::error(Code::kInvalidArgument, std::move(message)); }

template <typename To, typename Repeated>
Status narrow_into(const std::string& name, const std::string& datatype, const Repeated& values, std::string* bytes) {
  bytes->reserve(values.size() * sizeof(To));
  for (int i = 0; i < values.size(); ++i) {
    const auto v = values.Get(i);
    if (v < std::numeric_limits<To>::min() || v > std::numeric_limits<To>::max()) {
      return invalid("input '" + name + "': element " + std::to_string(i) + " (" + std::to_string(v) +
                     ") is out of the range of " + datatype);
    }
    const To x = static_cast<To>(v);
    bytes->append(reinterpret_cast<const char*>(&x), sizeof x);
  }
  return {};
}

// An input's typed contents (the field of its datatype) into little-endian bytes.
Status decode_contents(const inference::InferTensorContents& c, InputTensor* in) {
  const std::string& t = in->datatype;
  const std::string& n = in->name;
  if (t == "BOOL") {
    for (bool b : c.bool_contents()) in->bytes.push_back(b ? 1 : 0);
  } else if (t == "INT8") {
    return narrow_into<int8_t>(n, t, c.int_contents(), &in->bytes);
  } else if (t == "INT16") {
    return narrow_into<int16_t>(n, t, c.int_contents(), &in->bytes);
  } else if (t == "INT32") {
    return narrow_into<int32_t>(n, t, c.int_contents(), &in->bytes);
  } else if (t == "INT64") {
    return narrow_into<int64_t>(n, t, c.int64_contents(), &in->bytes);
  } else if (t == "UINT8") {
    return narrow_into<uint8_t>(n, t, c.uint_contents(), &in->bytes);
  } else if (t == "UINT16") {
    return narrow_into<uint16_t>(n, t, c.uint_contents(), &in->bytes);
  } else if (t == "UINT32") {
    return narrow_into<uint32_t>(n, t, c.uint_contents(), &in->bytes);
  } else if (t == "UINT64") {
    return narrow_into<uint64_t>(n, t, c.uint64_contents(), &in->bytes);
  } else if (t == "FP32") {
    in->bytes.assign(reinterpret_cast<const char*>(c.fp32_contents().data()), c.fp32_contents_size() * sizeof(float));
  } else if (t == "FP64") {
    in->bytes.assign(reinterpret_cast<const char*>(c.fp64_contents().data()), c.fp64_contents_size() * sizeof(double));
  } else if (t == "BYTES") {
    in->strings.assign(c.bytes_contents().begin(), c.bytes_contents().end());
  } else {
    return invalid("input '" + n + "': " + t + " has no typed contents field; send it in raw_input_contents");
  }
  return {};
}

// An output's bytes into the typed contents field of its datatype.
void encode_contents(const OutputTensor& out, inference::InferTensorContents* c) {
  const std::string& t = out.datatype;
  const std::string& b = out.bytes;
  const auto each = [&](auto type_tag, auto&& add) {
    using T = decltype(type_tag);
    const size_t n = b.size() / sizeof(T);
    for (size_t i = 0; i < n; ++i) {
      T v;
      std::memcpy(&v, b.data() + i * sizeof(T), sizeof(T));
      add(v);
    }
  };
  if (t == "BOOL") each(uint8_t{}, [&](uint8_t v) { c->add_bool_contents(v != 0); });
  if (t == "INT8") each(int8_t{}, [&](int8_t v) { c->add_int_contents(v); });
  if (t == "INT16") each(int16_t{}, [&](int16_t v) { c->add_int_contents(v); });
  if (t == "INT32") each(int32_t{}, [&](int32_t v) { c->add_int_contents(v); });
  if (t == "INT64") each(int64_t{}, [&](int64_t v) { c->add_int64_contents(v); });
  if (t == "UINT8") each(uint8_t{}, [&](uint8_t v) { c->add_uint_contents(v); });
  if (t == "UINT16") each(uint16_t{}, [&](uint16_t v) { c->add_uint_contents(v); });
  if (t == "UINT32") each(uint32_t{}, [&](uint32_t v) { c->add_uint_contents(v); });
  if (t == "UINT64") each(uint64_t{}, [&](uint64_t v) { c->add_uint64_contents(v); });
  if (t == "FP32") {
    c->mutable_fp32_contents()->Resize(static_cast<int>(b.size() / 4), 0.0f);
    std::memcpy(c->mutable_fp32_contents()->mutable_data(), b.data(), b.size());
  }
  if (t == "FP64") {
    c->mutable_fp64_contents()->Resize(static_cast<int>(b.size() / 8), 0.0);
    std::memcpy(c->mutable_fp64_contents()->mutable_data(), b.data(), b.size());
  }
  if (t == "BYTES") {
    for (const std::string& s : out.strings) c->add_bytes_contents(s);
  }
}

void set_metadata(const std::vector<TensorSpec>& specs,
                  google::protobuf::RepeatedPtrField<inference::ModelMetadataResponse::TensorMetadata>* out) {
  for (const TensorSpec& s : specs) {
    auto* m = out->Add();
    m->set_name(s.name);
    m->set_datatype(s.datatype);
    for (int64_t d : s.shape) m->add_shape(d);
  }
}

class Service final : public inference::GRPCInferenceService::Service {
 public:
  explicit Service(InferenceService& service) : service_(service) {}

  grpc::Status ServerLive(grpc::ServerContext*, const inference::ServerLiveRequest*,
                          inference::ServerLiveResponse* res) override {
    res->set_live(true);
    return grpc::Status::OK;
  }

  grpc::Status ServerReady(grpc::ServerContext*, const inference::ServerReadyRequest*,
                           inference::ServerReadyResponse* res) override {
    res->set_ready(service_.ready());
    return grpc::Status::OK;
  }

  grpc::Status ModelReady(grpc::ServerContext*, const inference::ModelReadyRequest* req,
                          inference::ModelReadyResponse* res) override {
    FoundVersion found;
    const Status s = service_.find(req->name(), req->version(), &found);
    if (!s.ok()) return to_grpc(s);
    res->set_ready(service_.ready());
    return grpc::Status::OK;
  }

  grpc::Status ServerMetadata(grpc::ServerContext*, const inference::ServerMetadataRequest*,
                              inference::ServerMetadataResponse* res) override {
    res->set_name("baton");
    res->set_version(BATON_VERSION);
    res->add_extensions("binary_tensor_data");
    return grpc::Status::OK;
  }

  grpc::Status ModelMetadata(grpc::ServerContext*, const inference::ModelMetadataRequest* req,
                             inference::ModelMetadataResponse* res) override {
    FoundVersion found;
    const Status s = service_.find(req->name(), req->version(), &found);
    if (!s.ok()) return to_grpc(s);
    res->set_name(found.model->name);
    for (const auto& [v, served] : found.model->versions) res->add_versions(std::to_string(v));
    res->set_platform("tensorflow_lite");
    set_metadata(found.version->inputs(), res->mutable_inputs());
    set_metadata(found.version->outputs(), res->mutable_outputs());
    return grpc::Status::OK;
  }

  grpc::Status ModelInfer(grpc::ServerContext* context, const inference::ModelInferRequest* req,
                          inference::ModelInferResponse* res) override {
    const Clock::time_point received = Clock::now();
    bool reached_model = false;  // from then on the model logs the request
    grpc::Status status;
    try {
      status = infer(context, req, res, &reached_model);
    } catch (const std::exception& e) {
      status = {grpc::StatusCode::INTERNAL, e.what()};
    }
    if (!status.ok() && !reached_model) {
      service_.log().record(req->id(), req->model_name(), req->model_version(),
                            Status::error(from_grpc(status.error_code()), status.error_message()),
                            std::chrono::duration<double>(Clock::now() - received).count());
    }
    return status;
  }

 private:
  grpc::Status infer(grpc::ServerContext* context, const inference::ModelInferRequest* req,
                     inference::ModelInferResponse* res, bool* reached_model) {
    FoundVersion found;
    Status s = service_.find(req->model_name(), req->model_version(), &found);
    if (!s.ok()) return to_grpc(s);
    InferRequest request;
    request.model = req->model_name();
    request.version = req->model_version();
    request.id = req->id();
    const bool raw = req->raw_input_contents_size() > 0;
    if (raw && req->raw_input_contents_size() != req->inputs_size()) {
      return to_grpc(invalid("raw_input_contents has " + std::to_string(req->raw_input_contents_size()) +
                             " entries, inputs has " + std::to_string(req->inputs_size()) + ": one each"));
    }
    for (int k = 0; k < req->inputs_size(); ++k) {
      const auto& jin = req->inputs(k);
      InputTensor in;
      in.name = jin.name();
      in.datatype = jin.datatype();
      if (!is_protocol_datatype(in.datatype)) {
        return to_grpc(invalid("input '" + in.name + "': unknown datatype '" + in.datatype + "'"));
      }
      in.shape.assign(jin.shape().begin(), jin.shape().end());
      if (raw) {
        if (jin.has_contents()) {
          return to_grpc(invalid("input '" + in.name + "' has contents, but the request uses raw_input_contents"));
        }
        const std::string& bytes = req->raw_input_contents(k);
        if (in.datatype == "BYTES") {
          s = decode_length_prefixed(in.name, bytes.data(), bytes.size(), &in.strings);
          if (!s.ok()) return to_grpc(s);
        } else {
          in.bytes = bytes;
        }
      } else {
        s = decode_contents(jin.contents(), &in);
        if (!s.ok()) return to_grpc(s);
      }
      request.inputs.push_back(std::move(in));
    }
    for (const auto& out : req->outputs()) request.outputs.push_back(out.name());
    const auto client_deadline = context->deadline();
    if (client_deadline != std::chrono::system_clock::time_point::max()) {
      const auto left = client_deadline - std::chrono::system_clock::now();
      request.deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(left);
    }
    if (!service_.begin_request()) return to_grpc(Status::error(Code::kUnavailable, "the server is shutting down"));
    std::promise<InferResult> promise;
    std::future<InferResult> future = promise.get_future();
    *reached_model = true;
    s = found.version->submit(std::move(request), [&promise](InferResult result) { promise.set_value(std::move(result)); });
    if (!s.ok()) {
      service_.end_request();
      return to_grpc(s);
    }
    InferResult result = future.get();
    service_.end_request();
    if (!result.status.ok()) return to_grpc(result.status);
    res->set_model_name(req->model_name());
    res->set_model_version(result.model_version);
    res->set_id(req->id());
    // Raw contents when the client sent raw inputs, and where a datatype has no typed field.
    bool raw_out = raw;
    for (const OutputTensor& out : result.outputs) raw_out |= out.datatype == "FP16" || out.datatype == "BF16";
    for (OutputTensor& out : result.outputs) {
      auto* o = res->add_outputs();
      o->set_name(out.name);
      o->set_datatype(out.datatype);
      for (int64_t d : out.shape) o->add_shape(d);
      if (raw_out) {
        res->add_raw_output_contents(out.datatype == "BYTES" ? encode_length_prefixed(out.strings) : std::move(out.bytes));
      } else {
        encode_contents(out, o->mutable_contents());
      }
    }
    return grpc::Status::OK;
  }

  InferenceService& service_;
};

}  // namespace

struct GrpcServer::Impl {
  InferenceService& service;
  GrpcOptions options;
  Service grpc_service;
  std::unique_ptr<grpc::Server> server;
  int bound_port = 0;
  Impl(InferenceService& s, const GrpcOptions& o) : service(s), options(o), grpc_service(s) {}
};

GrpcServer::GrpcServer(InferenceService& service, const GrpcOptions& options)
    : impl_(std::make_unique<Impl>(service, options)) {}

GrpcServer::~GrpcServer() { shutdown(std::chrono::milliseconds(0)); }

bool GrpcServer::start(std::string* error) {
  grpc::ServerBuilder builder;
  const std::string address = impl_->options.host + ":" + std::to_string(impl_->options.port);
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &impl_->bound_port);
  builder.SetMaxReceiveMessageSize(static_cast<int>(std::min<size_t>(impl_->options.max_message_bytes, INT32_MAX)));
  builder.SetMaxSendMessageSize(INT32_MAX);
  builder.RegisterService(&impl_->grpc_service);
  impl_->server = builder.BuildAndStart();
  if (!impl_->server || impl_->bound_port == 0) {
    *error = "gRPC: cannot listen on " + address;
    impl_->server.reset();
    return false;
  }
  return true;
}

uint16_t GrpcServer::port() const { return static_cast<uint16_t>(impl_->bound_port); }

void GrpcServer::shutdown(std::chrono::milliseconds timeout) {
  if (!impl_->server) return;
  impl_->server->Shutdown(std::chrono::system_clock::now() + timeout);
  impl_->server->Wait();
  impl_->server.reset();
}

}  // namespace baton::serve
