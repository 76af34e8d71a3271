package dev.kanuki.servlet;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/** An embedded Jetty 12 (ee10) on a free loopback port: one filter in front of some servlets. */
final class TestServer implements AutoCloseable {
    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private final Server server;
    private final URI base;

    private TestServer(Server server, URI base) {
        this.server = server;
        this.base = base;
    }

    /** Servlets by path, in front of which one filter runs (for REQUEST and ASYNC dispatches). */
    static final class Setup {
        final Map<String, HttpServlet> servlets = new LinkedHashMap<>();
        FilterHolder filter;

        Setup filter(Filter filter) {
            this.filter = new FilterHolder(filter);
            return this;
        }

        Setup filter(Map<String, String> initParameters) {
            this.filter = new FilterHolder(LockingFilter.class);
            initParameters.forEach(this.filter::setInitParameter);
            return this;
        }

        Setup servlet(String path, HttpServlet servlet) {
            servlets.put(path, servlet);
            return this;
        }

        TestServer start() throws Exception {
            Server server = new Server();
            ServerConnector connector = new ServerConnector(server);
            connector.setHost("127.0.0.1");
            connector.setPort(0);
            server.addConnector(connector);
            ServletContextHandler context = new ServletContextHandler("/app");
            servlets.forEach((path, servlet) -> {
                ServletHolder holder = new ServletHolder(servlet);
                holder.setAsyncSupported(true);
                context.addServlet(holder, path);
            });
            filter.setAsyncSupported(true);
            context.addFilter(filter, "/*", EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC));
            server.setHandler(context);
            server.start();
            return new TestServer(server, URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/app"));
        }
    }

    /** A servlet's work, as a lambda. */
    @FunctionalInterface
    interface Handler {
        void handle(HttpServletRequest request, HttpServletResponse response) throws IOException;
    }

    /** @return a servlet that runs {@code handler} for every method */
    static HttpServlet servlet(Handler handler) {
        return new HttpServlet() {
            private static final long serialVersionUID = 1L;

            @Override
            protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
                handler.handle(request, response);
            }
        };
    }

    static Setup setup() {
        return new Setup();
    }

    /** @return GET of {@code path}, with header pairs {@code name, value, ...} */
    CompletableFuture<HttpResponse<String>> get(String path, String... headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(base.resolve(base.getPath() + path))
                .timeout(Duration.ofSeconds(60));
        for (int i = 0; i < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        return CLIENT.sendAsync(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** @return a POST of an urlencoded form to {@code path} */
    CompletableFuture<HttpResponse<String>> postForm(String path, String form) {
        HttpRequest request = HttpRequest.newBuilder(base.resolve(base.getPath() + path))
                .timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(form)).build();
        return CLIENT.sendAsync(request, HttpResponse.BodyHandlers.ofString());
    }

    URI base() {
        return base;
    }

    @Override
    public void close() throws Exception {
        server.stop();
    }
}
