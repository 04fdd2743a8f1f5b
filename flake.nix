{
  description = "Arbiter: decision runs, a model router, API keys, usage, quota and billing over one HTTP JSON API";

  inputs = {
    nixpkgs.url = "github:NixOS/nixpkgs/nixos-24.11";
    flake-utils.url = "github:numtide/flake-utils";
  };

  outputs = { self, nixpkgs, flake-utils }:
    flake-utils.lib.eachDefaultSystem (system:
      let
        pkgs = import nixpkgs { inherit system; };
        nodejs = pkgs.nodejs_24;

        src = pkgs.lib.cleanSourceWith {
          src = ./.;
          filter = path: type:
            !(builtins.elem (baseNameOf path) [ "node_modules" ".data" "dist" "result" "scratch" ]);
        };

        # The service, built from package-lock.json (importNpmLock reads the lockfile's resolved URLs and
        # integrity hashes, so no separate dependency hash is kept in this file): every dependency, dev ones
        # included, is installed to build dist/ (`npm run build`, scripts/build.mjs: tsc, the esbuild bundles
        # dist/main.mjs and dist/cli.mjs, and the initialised embedded database template); the install then
        # prunes the dev dependencies, so the runtime closure holds only what the service runs with.
        arbiter = pkgs.buildNpmPackage {
          pname = "arbiter";
          version = "0.1.0";
          inherit src nodejs;
          npmDeps = pkgs.importNpmLock { npmRoot = ./.; };
          npmConfigHook = pkgs.importNpmLock.npmConfigHook;
          npmBuildScript = "build";
          nativeBuildInputs = [ pkgs.makeWrapper ];
          installPhase = ''
            runHook preInstall
            npm prune --omit=dev --no-save --offline --no-audit --no-fund
            mkdir -p $out/lib/arbiter $out/bin
            cp -r package.json package-lock.json node_modules dist migrations data $out/lib/arbiter/
            rm -f $out/lib/arbiter/dist/.sources $out/lib/arbiter/dist/.tsbuildinfo
            # The wrappers run from the caller's directory, so DATA_DIR's default (./.data) and relative paths mean
            # what the operator expects; the service finds migrations/ and data/ beside its package.json.
            makeWrapper ${nodejs}/bin/node $out/bin/arbiter --add-flags "$out/lib/arbiter/dist/cli.mjs"
            makeWrapper ${nodejs}/bin/node $out/bin/arbiter-server --add-flags "--max-semi-space-size=32 $out/lib/arbiter/dist/main.mjs"
            runHook postInstall
          '';
          meta.mainProgram = "arbiter-server";
        };

        # A check runs `command` in the package's build tree (all dependencies installed, before any pruning).
        check = name: command: arbiter.overrideAttrs (_: {
          pname = "arbiter-${name}";
          buildPhase = ''
            runHook preBuild
            ${command}
            runHook postBuild
          '';
          installPhase = ''
            mkdir -p $out
            echo passed > $out/${name}
          '';
        });

        # The image's one account: the service runs as arbiter (1000:1000), never as root.
        accounts = pkgs.runCommand "arbiter-accounts" { } ''
          mkdir -p $out/etc
          printf 'root:x:0:0:root:/root:/sbin/nologin\narbiter:x:1000:1000:arbiter:/var/lib/arbiter:/sbin/nologin\n' > $out/etc/passwd
          printf 'root:x:0:\narbiter:x:1000:\n' > $out/etc/group
        '';
      in
      {
        packages.default = arbiter;

        # An OCI image: nix build .#image && docker load < result;
        # docker run -p 8080:8080 -v arbiter-data:/var/lib/arbiter arbiter:0.1.0 (or -e DATABASE_URL=...)
        packages.image = pkgs.dockerTools.buildLayeredImage {
          name = "arbiter";
          tag = "0.1.0";
          contents = [ arbiter accounts pkgs.cacert ];
          fakeRootCommands = ''
            mkdir -p var/lib/arbiter tmp
            chown 1000:1000 var/lib/arbiter
            chmod 0700 var/lib/arbiter
            chmod 1777 tmp
          '';
          config = {
            User = "1000:1000";
            WorkingDir = "/var/lib/arbiter";
            Cmd = [ "${arbiter}/bin/arbiter-server" ];
            Env = [
              "HOST=0.0.0.0"
              "PORT=8080"
              "DATA_DIR=/var/lib/arbiter"
              "HOME=/var/lib/arbiter"
              "SSL_CERT_FILE=${pkgs.cacert}/etc/ssl/certs/ca-bundle.crt"
            ];
            ExposedPorts = { "8080/tcp" = { }; };
            Volumes = { "/var/lib/arbiter" = { }; };
          };
        };

        apps.default = {
          type = "app";
          program = "${arbiter}/bin/arbiter-server";
        };

        # nix flake check: the typecheck (sources and tests) and the test suite on the embedded database, with no
        # network and no PostgreSQL (the PostgreSQL-only tests skip themselves; so does the browser test, as no
        # Chromium is in the sandbox); and the package itself builds.
        checks = {
          typecheck = check "typecheck" "npm run typecheck";
          tests = check "tests" "npm test";
          package = arbiter;
        };

        devShells.default = pkgs.mkShell {
          packages = [ nodejs pkgs.postgresql_15 ];
          shellHook = ''
            echo "node $(node --version), $(postgres --version)"
          '';
        };
      });
}
