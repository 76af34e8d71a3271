/** A user's modular application: it requires kanuki's API; the backends are services on the module path. */
module app {
    requires dev.kanuki.core;
}
