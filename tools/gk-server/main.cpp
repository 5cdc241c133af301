// gk-server - an OpenAI-compatible HTTP server for a GGUF language model, on the CPU.
//
//   gk-server -m MODEL.gguf [--host 127.0.0.1] [--port 8080] [-c N] [-np N] [--api-key KEY]
//
// Loads the model, makes -np slots (a Session each), binds to --host:--port only and
// prints "gk-server: listening on http://HOST:PORT" on stdout once it accepts connections
// (--port 0: the port the system chose). SIGINT and SIGTERM stop it: requests in flight
// end where they are, and it exits 0. Exit status 1 with one line "gk-server: error: ..."
// when the options, the model or the address are wrong.
#include "options.h"
#include "routes.h"
#include "slots.h"

#include "run/chat.h"
#include "run/context_check.h"
#include "run/model.h"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <pthread.h>
#include <thread>

namespace {

using namespace gk_server;

int fail(const std::string & msg) {
    std::fprintf(stderr, "gk-server: error: %s\n", msg.c_str());
    return 1;
}

int run(int argc, char ** argv) {
    server_options opt;
    if (auto rc = parse_options(argc, argv, opt)) return *rc;

    // SIGINT / SIGTERM are taken by one thread (sigtimedwait below); every other thread,
    // the compute pools and httplib's workers included, inherits the blocked mask.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
    std::signal(SIGPIPE, SIG_IGN);  // a client that goes away is a failed write, not the end

    std::string error;
    auto        model = gk::run::Model::load(opt.model, {}, &error);
    if (!model) return fail(error);
    for (const std::string & w : model->warnings()) {
        std::fprintf(stderr, "gk-server: warning: %s: %s\n", opt.model.c_str(), w.c_str());
    }
    const auto & hp = model->hp();

    gk::run::session_params sp;
    sp.n_ctx     = gk::run::resolve_n_ctx(hp, opt.n_ctx, opt.n_ctx_given);
    sp.n_ubatch  = opt.n_ubatch;
    sp.n_threads = opt.n_threads;
    sp.n_threads_batch = opt.n_threads_batch;
    sp.type_k    = opt.type_k;
    sp.type_v    = opt.type_v;
    if (const std::string w = gk::run::context_warning(hp, sp.n_ctx); !w.empty()) {
        std::fprintf(stderr, "gk-server: warning: %s\n", w.c_str());
    }
    gk::run::hparams all = hp;  // the caches of every slot together
    all.n_layer *= opt.n_parallel;
    error = gk::run::check_context(all, sp.n_ctx, sp.type_k, sp.type_v, gk::run::available_memory_bytes());
    if (!error.empty()) return fail(error + " or -np");

    // The chat template: --chat-template, else the model's, else chatml (with a warning).
    auto tmpl = gk::run::choose_chat_template(opt.chat_template, model->gguf(), model->tokenizer(), &error);
    if (!tmpl) {
        error = error.substr(0, error.find("; choose"));
        std::fprintf(stderr, "gk-server: warning: %s; /v1/chat/completions uses chatml (--chat-template NAME)\n",
                     error.c_str());
        tmpl = gk::run::chat_template::chatml;
    }
    auto slots = SlotPool::create(*model, sp, opt.n_parallel, &error);
    if (!slots) return fail(error);

    server_state st{opt, *model, *tmpl, *slots,
                    opt.alias.empty() ? std::filesystem::path(opt.model).filename().string() : opt.alias};
    st.n_ctx = sp.n_ctx;
    // Embeddings' pooling: --pooling, else the model's when it is one gk-server pools
    // with, else mean (llama-server would refuse /v1/embeddings under none).
    if (opt.pooling) {
        st.pooling = *opt.pooling;
    } else if (hp.pooling_type >= 1 && hp.pooling_type <= 3) {
        st.pooling = static_cast<gk::run::pooling>(hp.pooling_type);
    } else if (opt.embeddings && hp.pooling_type >= 0) {
        std::fprintf(stderr, "gk-server: warning: the model's pooling type is %s; embeddings pool with mean "
                             "(--pooling TYPE)\n",
                     gk::run::pooling_name(static_cast<gk::run::pooling>(hp.pooling_type)));
    }

    httplib::Server svr;
    const size_t    n_workers = static_cast<size_t>(std::max(8, 2 * opt.n_parallel + 4));
    svr.new_task_queue        = [n_workers] { return new httplib::ThreadPool(n_workers); };
    install_routes(svr, st);
    const int port = opt.port == 0                          ? svr.bind_to_any_port(opt.host)
                     : svr.bind_to_port(opt.host, opt.port) ? opt.port
                                                            : -1;
    if (port < 0) return fail("cannot listen on " + opt.host + ":" + std::to_string(opt.port));

    std::atomic<bool> done{false};
    std::thread       waiter([&] {
        const timespec tick{0, 100 * 1000 * 1000};
        while (!done) {
            const int sig = sigtimedwait(&stop_signals, nullptr, &tick);
            if (sig != SIGINT && sig != SIGTERM) continue;
            std::fprintf(stderr, "gk-server: %s: stopping\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
            st.stopping = true;
            slots->close();
            // listen_after_bind may not have started yet: stop() only acts on a running server.
            while (!done && !svr.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
            svr.stop();
            return;
        }
    });
    std::fprintf(stderr, "gk-server: %s, context %lld per slot, %d slot%s, %d threads, chat template %s%s%s\n",
                 st.model_id.c_str(), static_cast<long long>(sp.n_ctx), opt.n_parallel, opt.n_parallel == 1 ? "" : "s",
                 opt.n_threads, gk::run::chat_template_name(*tmpl), opt.embeddings ? ", embeddings pooled by " : "",
                 opt.embeddings ? gk::run::pooling_name(st.pooling) : "");
    std::printf("gk-server: listening on http://%s:%d\n", opt.host.c_str(), port);
    std::fflush(stdout);
    const bool ok = svr.listen_after_bind();
    done          = true;
    waiter.join();
    if (!ok && !st.stopping) return fail("the server stopped: cannot accept connections");
    const gk::run::Batcher::step_stats bs = slots->batcher().stats();
    std::fprintf(stderr, "gk-server: %lld forward steps, %.2f slots per step on average, at most %lld\n",
                 static_cast<long long>(bs.steps),
                 bs.steps ? static_cast<double>(bs.sequences) / static_cast<double>(bs.steps) : 0.0,
                 static_cast<long long>(bs.most));
    return 0;
}

} // namespace

int main(int argc, char ** argv) { return run(argc, argv); }
