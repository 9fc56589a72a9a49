//! A campaign as batch jobs (`campaign emit`): one job per node count its points need, each
//! running those points into a store of its own (SQLite takes one writer, and a parallel file
//! system does not make several safe), and a last job that waits for them and merges the
//! stores into the campaign's. The scripts are plain text for Slurm, LSF or PBS; what only a
//! site can choose (partition, account, launcher, modules) comes from the file's `[batch]`.

use std::path::Path;

/// The campaign file's `[batch]` table.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    /// Slurm's partition, LSF's or PBS's queue; empty for the site's default.
    pub partition: String,
    /// The account (LSF: project) charged; empty for none.
    pub account: String,
    /// What starts the ranks inside the allocation, written before `iosurvey`: `srun`,
    /// `mpirun` with its options.
    pub launcher: String,
    /// Modules loaded before the launch.
    pub modules: Vec<String>,
    /// Shell lines run before the launch (environment the launcher needs).
    pub setup: Vec<String>,
    /// Processes per node: a point of c clients takes ceil(c / this) nodes.
    pub tasks_per_node: usize,
    /// Nodes of the studies that run on a whole launch (survey, matrix, io500); by default the
    /// most any swept point takes.
    pub nodes: Option<usize>,
    /// The time limit is the estimate times this, plus [`SETUP_SECS`].
    pub margin: f64,
    /// The estimate of a point no stored run estimates.
    pub point_secs: Option<f64>,
    /// The iosurvey the jobs run; by default the one that wrote them.
    pub iosurvey: Option<String>,
}

impl Batch {
    /// The table's keys.
    pub const KEYS: &'static [&'static str] = &[
        "partition",
        "account",
        "launcher",
        "modules",
        "setup",
        "tasks-per-node",
        "nodes",
        "margin",
        "point-time",
        "iosurvey",
    ];
}

/// The nodes each point takes, from its clients (none for a study of a whole launch): the
/// fewest nodes of `per_node` processes that hold its clients (which a run takes round-robin
/// over the launch's nodes, so in a job of that many nodes it runs on all of them); a whole
/// launch takes `whole`, or else the most any point takes.
pub fn nodes_taken(clients: &[Option<usize>], per_node: usize, whole: Option<usize>) -> Vec<usize> {
    let of = |c: usize| c.max(1).div_ceil(per_node.max(1));
    let whole = whole.or(clients.iter().flatten().map(|&c| of(c)).max()).unwrap_or(1);
    clients.iter().map(|c| c.map_or(whole, of)).collect()
}

/// Time a job is given beyond its points' estimate: start-up, the store's merge-in, the
/// launcher's own start.
pub const SETUP_SECS: f64 = 300.0;

/// The words every script holds, by which `emit` knows a file it may write over.
pub const MARK: &str = "Written by iosurvey campaign emit";

/// The merge job's time limit.
const MERGE_SECS: u64 = 1800;

/// The batch systems.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum System {
    /// Slurm (sbatch).
    Slurm,
    /// IBM Spectrum LSF (bsub).
    Lsf,
    /// PBS Pro / OpenPBS / Torque (qsub).
    Pbs,
}

impl System {
    /// The scripts' file extension.
    fn ext(self) -> &'static str {
        match self {
            System::Slurm => "sbatch",
            System::Lsf => "lsf",
            System::Pbs => "pbs",
        }
    }

    /// The variable that holds a job's id inside the job.
    fn job_id(self) -> &'static str {
        match self {
            System::Slurm => "SLURM_JOB_ID",
            System::Lsf => "LSB_JOBID",
            System::Pbs => "PBS_JOBID",
        }
    }

    /// A time limit in the system's form, from seconds (whole minutes).
    fn limit(self, secs: u64) -> String {
        let (h, m) = (secs / 3600, secs % 3600 / 60);
        match self {
            System::Slurm if h >= 24 => format!("{}-{:02}:{m:02}:00", h / 24, h % 24),
            System::Lsf => format!("{h}:{m:02}"),
            _ => format!("{h:02}:{m:02}:00"),
        }
    }

    /// The lines of `submit` that submit `script` after the job before it (`after`) and add
    /// its id to the array `jobs`: the jobs run one after another, as a campaign's points do,
    /// so that no two share the storage they measure.
    fn submit(self, script: &str) -> String {
        match self {
            System::Slurm => format!(
                "jobs+=(\"$(sbatch --parsable \"${{after[@]}}\" {script} | cut -d';' -f1)\")\nafter=(--dependency=afterany:\"${{jobs[-1]}}\")"
            ),
            System::Lsf => format!(
                "jobs+=(\"$(bsub \"${{after[@]}}\" < {script} | sed -n 's/^Job <\\([0-9]*\\)>.*/\\1/p')\")\nafter=(-w \"ended(${{jobs[-1]}})\")"
            ),
            System::Pbs => format!(
                "jobs+=(\"$(qsub \"${{after[@]}}\" {script})\")\nafter=(-W depend=afterany:\"${{jobs[-1]}}\")"
            ),
        }
    }

    /// The line of `submit` that submits the merge job after every job in `jobs` ended, ok or
    /// not (a failed job's points stay to run, and the merged status says so), telling it the
    /// jobs through IOSURVEY_JOBS.
    fn submit_last(self, script: &str) -> String {
        match self {
            System::Slurm => format!(
                "merge=$(IOSURVEY_JOBS=\"${{jobs[*]}}\" sbatch --parsable --dependency=afterany:\"$(IFS=:; echo \"${{jobs[*]}}\")\" {script} | cut -d';' -f1)"
            ),
            System::Lsf => format!(
                "merge=$(IOSURVEY_JOBS=\"${{jobs[*]}}\" bsub -w \"$(printf 'ended(%s) && ' \"${{jobs[@]}}\" | sed 's/ && $//')\" < {script} | sed -n 's/^Job <\\([0-9]*\\)>.*/\\1/p')"
            ),
            System::Pbs => format!(
                "merge=$(qsub -v \"IOSURVEY_JOBS=${{jobs[*]}}\" -W depend=afterany:\"$(IFS=:; echo \"${{jobs[*]}}\")\" {script})"
            ),
        }
    }
}

/// One job: the points that take `nodes` nodes.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// Its nodes.
    pub nodes: usize,
    /// Its points still to run.
    pub points: usize,
    /// Their estimated time, in seconds.
    pub secs: f64,
}

/// Everything the scripts name, absolute.
#[derive(Debug, Clone)]
pub struct Emit<'a> {
    /// The batch system.
    pub system: System,
    /// The file's `[batch]`.
    pub batch: &'a Batch,
    /// The campaign's name (the jobs' names).
    pub name: &'a str,
    /// The campaign file.
    pub file: &'a Path,
    /// The campaign's store; each job's store is beside it.
    pub store: &'a Path,
    /// The iosurvey the jobs run.
    pub binary: &'a str,
    /// The directory the jobs start in.
    pub workdir: &'a Path,
    /// Where the scripts and the jobs' output go.
    pub dir: &'a Path,
    /// The option that named `dir` (`--slurm`), for a refusal.
    pub flag: &'a str,
}

impl Emit<'_> {
    /// A job's header: its name, nodes, exclusivity, limit, output and the site's settings;
    /// `out` is the output directory as a directive carries it.
    fn header(
        &self,
        job: &str,
        out: &str,
        (nodes, per_node, secs): (usize, usize, u64),
    ) -> Result<Vec<String>, String> {
        let (b, system) = (self.batch, self.system);
        let job = put("the job name", job, At::Directive)?;
        let mut h = match system {
            System::Slurm => vec![
                format!("#SBATCH -J {job}"),
                format!("#SBATCH -N {nodes}"),
                "#SBATCH --exclusive".into(),
                format!("#SBATCH --ntasks-per-node={per_node}"),
                format!("#SBATCH -t {}", system.limit(secs)),
                format!("#SBATCH -o {out}/{job}-%j.out"),
            ],
            System::Lsf => vec![
                format!("#BSUB -J {job}"),
                format!("#BSUB -n {}", nodes * per_node),
                format!("#BSUB -R \"span[ptile={per_node}]\""),
                "#BSUB -x".into(),
                format!("#BSUB -W {}", system.limit(secs)),
                format!("#BSUB -o {out}/{job}-%J.out"),
            ],
            System::Pbs => vec![
                format!("#PBS -N {job}"),
                format!("#PBS -l select={nodes}:mpiprocs={per_node}"),
                "#PBS -l place=scatter:excl".into(),
                format!("#PBS -l walltime={}", system.limit(secs)),
                "#PBS -j oe".into(),
                format!("#PBS -o {out}/"),
            ],
        };
        let (queue, account) = match system {
            System::Slurm => ("#SBATCH -p", "#SBATCH -A"),
            System::Lsf => ("#BSUB -q", "#BSUB -P"),
            System::Pbs => ("#PBS -q", "#PBS -A"),
        };
        if !b.partition.is_empty() {
            h.push(format!("{queue} {}", put("[batch] partition", &b.partition, At::Directive)?));
        }
        if !b.account.is_empty() {
            h.push(format!("{account} {}", put("[batch] account", &b.account, At::Directive)?));
        }
        Ok(h)
    }
}

/// A script to write: its file name in the emit directory, and its text.
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    /// File name.
    pub name: String,
    /// Text.
    pub text: String,
}

/// A job's time limit in whole minutes, in seconds: the estimate times the margin, plus
/// set-up.
pub fn limit_secs(estimate: f64, margin: f64) -> u64 {
    let secs = estimate.max(0.0) * margin + SETUP_SECS;
    (secs / 60.0).ceil() as u64 * 60
}

/// The campaign's name as a job's name and a file name: what a scheduler or a path would read
/// otherwise (blanks, `/`, Slurm's `%` patterns) becomes `_`.
fn job_name(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect()
}

/// Whether `text` is a line of a script `emit` wrote: the mark in a comment of its own.
pub fn is_emitted(text: &str) -> bool {
    text.lines().take(4).any(|l| l.starts_with(&format!("# {MARK}")))
}

/// Where a string lands in a script, which decides what it may hold.
#[derive(Debug, Clone, Copy, PartialEq)]
enum At {
    /// A shell word: quoted when it would read otherwise.
    Word,
    /// A comment's text, or shell text the file gives as such (a module, a setup line, the
    /// launcher): written as it is.
    Line,
    /// A scheduler's directive, which splits at blanks, reads `%` as a pattern and has no
    /// quoting.
    Directive,
}

/// Every string that enters a script passes here, as it is written (a path resolved, links
/// followed): a control character would end its comment or directive and begin a line of
/// its own, a command, so it is refused wherever it lands; a directive also refuses what
/// it would split or misread. The refusal names `whose` the string is.
fn put(whose: &str, text: &str, at: At) -> Result<String, String> {
    let misread = |c: char| at == At::Directive && (c.is_whitespace() || "%\"'\\".contains(c));
    if let Some(c) = text.chars().find(|&c| c.is_control() || misread(c)) {
        let place = if at == At::Directive { "a batch directive" } else { "a batch script" };
        return Err(format!("{whose} {} holds {c:?}, which {place} cannot carry", crate::escape::visible(text)));
    }
    Ok(match at {
        At::Word => crate::shell::words(&[text.to_string()]),
        At::Line | At::Directive => text.to_string(),
    })
}

/// The job store of the job whose id is in `$var`, beside `store`: `eval.db` gives
/// `eval.job${SLURM_JOB_ID}.db`.
fn job_store(store: &Path, var: &str) -> Result<String, String> {
    let dir = store.parent().unwrap_or(Path::new("/"));
    let stem = store.file_stem().map_or("iosurvey".into(), |s| s.to_string_lossy().into_owned());
    let (dir, stem) = (put("--db", &dir.display().to_string(), At::Word)?, put("--db", &stem, At::Word)?);
    Ok(format!("{dir}/{stem}.job\"${{{var}}}\".db"))
}

/// The scripts: a job per entry of `jobs`, the merge job, and `submit`, which submits them
/// in order. Refused, in one line, when a string they would hold cannot be carried.
pub fn scripts(e: &Emit, jobs: &[Job]) -> Result<Vec<Script>, String> {
    let b = e.batch;
    let shown = |p: &Path| p.display().to_string();
    let bin = put("[batch] iosurvey", e.binary, At::Word)?;
    let file = put("the campaign file", &shown(e.file), At::Word)?;
    let store = put("--db", &shown(e.store), At::Word)?;
    let dir = put(e.flag, &shown(e.dir), At::Word)?;
    let out = put(e.flag, &shown(e.dir), At::Directive)?;
    let workdir = put("the current directory", &shown(e.workdir), At::Word)?;
    let name = put("the campaign's name", e.name, At::Line)?;
    let launcher = put("[batch] launcher", &b.launcher, At::Line)?;
    let mut set_up = Vec::new();
    for m in &b.modules {
        set_up.push(format!("module load {}", put("[batch] modules", m, At::Line)?));
    }
    for l in &b.setup {
        set_up.push(put("[batch] setup", l, At::Line)?);
    }
    let opening = |header: Vec<String>, about: &str| {
        let mut s = vec![
            if b.modules.is_empty() { "#!/bin/bash" } else { "#!/bin/bash -l" }.to_string(),
            format!("# {about}"),
            format!("# {MARK}; submit every job with: bash {dir}/submit"),
        ];
        s.extend(header);
        s.push("set -eo pipefail".into());
        s.extend(set_up.iter().cloned());
        s.push(format!("cd {workdir}"));
        s
    };
    let mut out_scripts = Vec::new();
    for j in jobs {
        let job = format!("{}-n{}", job_name(e.name), j.nodes);
        let secs = limit_secs(j.secs, b.margin);
        let about = format!(
            "campaign {name}: its {} points on {} nodes, estimated {:.0} s (limit: x{} + {} s set-up)",
            j.points, j.nodes, j.secs, b.margin, SETUP_SECS
        );
        let mut s = opening(e.header(&job, &out, (j.nodes, b.tasks_per_node, secs))?, &about);
        s.push(format!("store={}", job_store(e.store, e.system.job_id())?));
        s.push("# This job's own store: what the campaign's store holds already is merged in first, so".into());
        s.push("# that the run skips it; the merge job brings the stores together at the end.".into());
        s.push(format!("if [ -e {store} ]; then {bin} merge {store} --into \"$store\"; fi"));
        s.push(format!("{launcher} {bin} campaign run {file} --only nodes={} --db \"$store\"", j.nodes));
        out_scripts.push(Script { name: format!("nodes-{}.{}", j.nodes, e.system.ext()), text: s.join("\n") + "\n" });
    }
    let job = format!("{}-merge", job_name(e.name));
    let about = format!("campaign {name}: merges the jobs' stores (IOSURVEY_JOBS) into {store}");
    let mut s = opening(e.header(&job, &out, (1, 1, MERGE_SECS))?, &about);
    s.push("stores=()".into());
    s.push("for id in ${IOSURVEY_JOBS:?the jobs whose stores to merge}; do".into());
    s.push(format!("    s={}", job_store(e.store, "id")?));
    s.push("    # A job that failed before its first point made no store: its points stay to run.".into());
    s.push("    if [ ! -e \"$s\" ]; then echo \"job $id made no store ($s)\" >&2; continue; fi".into());
    s.push("    # A job killed while writing left a journal: opening its store rolls that write back.".into());
    s.push(format!("    if [ -s \"$s-journal\" ]; then {bin} ls --db \"$s\" > /dev/null; fi"));
    s.push("    stores+=(\"$s\")".into());
    s.push("done".into());
    s.push("[ ${#stores[@]} -gt 0 ] || { echo \"no job made a store: nothing to merge\" >&2; exit 1; }".into());
    s.push(format!("{bin} merge \"${{stores[@]}}\" --into {store}"));
    s.push(format!("{bin} campaign status {file} --db {store}"));
    out_scripts.push(Script { name: format!("merge.{}", e.system.ext()), text: s.join("\n") + "\n" });

    let mut s = vec![
        "#!/bin/bash".to_string(),
        format!("# Submits campaign {name}'s jobs, then the job that merges their stores once all ended."),
        format!("# {MARK}."),
        "set -euo pipefail".into(),
        format!("cd {dir}"),
        "jobs=()".into(),
        "after=()".into(),
    ];
    s.extend(out_scripts.iter().filter(|x| x.name.starts_with("nodes-")).map(|x| e.system.submit(&x.name)));
    s.push(e.system.submit_last(&format!("merge.{}", e.system.ext())));
    s.push("echo \"submitted jobs ${jobs[*]}; merge job $merge\"".into());
    out_scripts.push(Script { name: "submit".into(), text: s.join("\n") + "\n" });
    Ok(out_scripts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn batch() -> Batch {
        Batch {
            partition: "storage".into(),
            account: String::new(),
            launcher: "srun".into(),
            modules: vec!["openmpi/4.1".into()],
            setup: vec![],
            tasks_per_node: 2,
            nodes: None,
            margin: 1.5,
            point_secs: None,
            iosurvey: None,
        }
    }

    fn emitted(system: System) -> Vec<Script> {
        let b = batch();
        let (file, store, work, dir) = (
            PathBuf::from("/p/eval.toml"),
            PathBuf::from("/p/st ore/eval.db"),
            PathBuf::from("/p"),
            PathBuf::from("/p/jobs"),
        );
        let e = Emit {
            system,
            batch: &b,
            name: "eval",
            file: &file,
            store: &store,
            binary: "/opt/iosurvey",
            workdir: &work,
            dir: &dir,
            flag: "--slurm",
        };
        scripts(&e, &[Job { nodes: 1, points: 3, secs: 600.0 }, Job { nodes: 4, points: 2, secs: 100_000.0 }]).unwrap()
    }

    #[test]
    fn a_string_a_script_cannot_carry_is_refused_wherever_it_would_land() {
        let b = batch();
        let (plain, job) = (PathBuf::from("/p/eval.toml"), [Job { nodes: 1, points: 1, secs: 60.0 }]);
        let injected = PathBuf::from("/p/x\ntouch /p/PWNED\n#/jobs");
        let spaced = PathBuf::from("/p/my jobs");
        for system in [System::Slurm, System::Lsf, System::Pbs] {
            let e = |dir: &'_ PathBuf, store: &'_ PathBuf| {
                let e = Emit {
                    system,
                    batch: &b,
                    name: "eval",
                    file: &plain,
                    store,
                    binary: "/opt/iosurvey",
                    workdir: &plain,
                    dir,
                    flag: "--lsf",
                };
                scripts(&e, &job)
            };
            let said = e(&injected, &plain).unwrap_err();
            assert!(
                said.starts_with("--lsf /p/x\\ntouch")
                    && said.ends_with("holds '\\n', which a batch script cannot carry"),
                "{said}"
            );
            let said = e(&spaced, &plain).unwrap_err();
            assert!(said.contains("holds ' ', which a batch directive cannot carry"), "{said}");
            assert!(e(&plain, &injected).unwrap_err().starts_with("--db "));
            // A blank in the store's path is a quoted word, in commands and comments alike.
            let ok = e(&plain, &spaced).unwrap();
            assert!(ok[1].text.contains("into '/p/my jobs'\n"), "{}", ok[1].text);
        }
    }

    #[test]
    fn a_name_a_scheduler_would_misread_becomes_plain_and_only_emits_own_files_count_as_its() {
        assert_eq!(job_name("my eval/x %u"), "my_eval_x__u");
        assert_eq!(job_name("isilon-f800_v2.1"), "isilon-f800_v2.1");
        let s = emitted(System::Slurm);
        assert!(s.iter().all(|x| is_emitted(&x.text)), "every script carries the mark");
        assert!(!is_emitted("my notes\nmention: Written by iosurvey campaign emit\n"));
    }

    #[test]
    fn a_point_takes_the_nodes_its_clients_fill() {
        let clients = [Some(1), Some(2), Some(3), None];
        assert_eq!(nodes_taken(&clients, 2, None), [1, 1, 2, 2], "a whole launch takes the most");
        assert_eq!(nodes_taken(&clients, 2, Some(9)), [1, 1, 2, 9]);
        assert_eq!(nodes_taken(&clients, 1, None), [1, 2, 3, 3]);
        assert_eq!(nodes_taken(&[None], 4, None), [1], "no swept point: one node unless told");
    }

    #[test]
    fn the_limit_is_the_estimate_times_the_margin_plus_set_up_in_whole_minutes() {
        assert_eq!(limit_secs(600.0, 1.5), 1200);
        assert_eq!(limit_secs(1.0, 1.5), 360);
        assert_eq!(System::Slurm.limit(1200), "00:20:00");
        assert_eq!(System::Slurm.limit(limit_secs(100_000.0, 1.5)), "1-17:45:00");
        assert_eq!(System::Lsf.limit(limit_secs(100_000.0, 1.5)), "41:45");
        assert_eq!(System::Pbs.limit(limit_secs(100_000.0, 1.5)), "41:45:00");
    }

    #[test]
    fn slurm_gets_a_job_per_node_count_a_merge_and_a_submit() {
        let s = emitted(System::Slurm);
        let names: Vec<&str> = s.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["nodes-1.sbatch", "nodes-4.sbatch", "merge.sbatch", "submit"]);
        let four = &s[1].text;
        for line in [
            "#!/bin/bash -l",
            "#SBATCH -N 4",
            "#SBATCH --exclusive",
            "#SBATCH --ntasks-per-node=2",
            "#SBATCH -t 1-17:45:00",
            "#SBATCH -o /p/jobs/eval-n4-%j.out",
            "#SBATCH -p storage",
            "module load openmpi/4.1",
            "store='/p/st ore'/eval.job\"${SLURM_JOB_ID}\".db",
            "srun /opt/iosurvey campaign run /p/eval.toml --only nodes=4 --db \"$store\"",
        ] {
            assert!(four.lines().any(|l| l == line), "no line {line:?} in:\n{four}");
        }
        assert!(!four.contains("#SBATCH -A"), "an empty account is left out");
        let merge = &s[2].text;
        assert!(merge.contains("merge \"${stores[@]}\" --into '/p/st ore/eval.db'"), "{merge}");
        let submit = &s[3].text;
        assert!(submit.contains("sbatch --parsable \"${after[@]}\" nodes-1.sbatch"), "{submit}");
        assert!(
            submit.contains("after=(--dependency=afterany:\"${jobs[-1]}\")"),
            "each job after the one before: {submit}"
        );
        assert!(submit.contains("--dependency=afterany:"), "{submit}");
    }

    #[test]
    fn lsf_and_pbs_say_the_same_in_their_words() {
        let lsf = &emitted(System::Lsf)[1].text;
        for line in ["#BSUB -n 8", "#BSUB -R \"span[ptile=2]\"", "#BSUB -x", "#BSUB -q storage"] {
            assert!(lsf.lines().any(|l| l == line), "no line {line:?} in:\n{lsf}");
        }
        assert!(lsf.contains("${LSB_JOBID}"));
        let pbs = &emitted(System::Pbs)[1].text;
        for line in ["#PBS -l select=4:mpiprocs=2", "#PBS -l place=scatter:excl", "#PBS -q storage"] {
            assert!(pbs.lines().any(|l| l == line), "no line {line:?} in:\n{pbs}");
        }
        assert!(emitted(System::Pbs)[3].text.contains("depend=afterany:"));
        assert!(emitted(System::Lsf)[3].text.contains("ended(%s)"));
    }
}
